"""The web room: the display page and the table-top page, and their live updates (WebSocket/SSE).
"""
