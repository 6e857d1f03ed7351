"""The embedded default: SQLite memory storage and SQLite vector store in one file."""
