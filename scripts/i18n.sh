#!/usr/bin/env bash
# Keeps the gettext catalogs current with Babel: extract every marked string
# into the template, then merge it into each language's catalog (new strings
# arrive untranslated; tests/i18n fails until a translator fills them in).
#   bash scripts/i18n.sh            extract + update
#   bash scripts/i18n.sh init LANG  start a catalog for a new language (ll_CC)
set -euo pipefail
cd "$(dirname "$0")/.."
LOCALE=host/tablesense/i18n/locale
POT=$LOCALE/tablesense.pot
PYBABEL=.venv/bin/pybabel
"$PYBABEL" -q extract -F babel.cfg --ignore-dirs="firmware hardware .*" \
  -k say -k N_ -k _ -k plural:1,2 -k NC_:1c,2 --add-location=file --sort-output \
  --project=tablesense --copyright-holder="tablesense" -o "$POT" host/tablesense
if [ "${1:-}" = init ]; then
  "$PYBABEL" init -i "$POT" -d "$LOCALE" -D tablesense -l "$2"
  exit 0
fi
for lang in pt_BR ms; do
  "$PYBABEL" -q update -i "$POT" -d "$LOCALE" -D tablesense -l "$lang" \
    --no-fuzzy-matching --ignore-obsolete
done
echo "catalogs updated: $LOCALE/{pt_BR,ms}/LC_MESSAGES/tablesense.po"
