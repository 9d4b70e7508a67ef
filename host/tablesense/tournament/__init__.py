"""The tournament room: the club director: events, formats, pairing, standings, the MQTT bridge to the
tables, storage, pages and exports.
"""

#: The event database the tournament commands use when --db is not given
#: (here, not in db.py: the commands' options need it without importing SQLAlchemy).
DEFAULT_DB = "sqlite:///tablesense-events.db"
