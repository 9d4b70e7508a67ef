"""The remote room: matches whose seats sit at several tables (docs/remote.md)."""
