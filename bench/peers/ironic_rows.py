"""The template rows the benchmark's copies of Ironic nodes start from (ironic_clone.py, ironic_mirror.py).

A template node is one Ironic created through its own API; copies take all its columns (and
its ports') but the ones a script replaces, so they are what Ironic itself would have written.
"""
import sqlite3


class Template:
    """A template node's row, its ports' rows, and INSERT statements for copies of them."""

    def __init__(self, con: sqlite3.Connection, template_uuid: str) -> None:
        con.row_factory = sqlite3.Row
        node = con.execute("SELECT * FROM nodes WHERE uuid = ?", (template_uuid,)).fetchone()
        if node is None:
            raise SystemExit("template node %s not found" % template_uuid)
        self.node = node
        self.ports = con.execute("SELECT * FROM ports WHERE node_id = ? ORDER BY id", (node["id"],)).fetchall()
        self.node_cols = [c for c in node.keys() if c != "id"]
        self.port_cols = [c for c in self.ports[0].keys() if c != "id"] if self.ports else []
        self.node_sql = "INSERT INTO nodes (%s) VALUES (%s)" % (", ".join(self.node_cols), ", ".join("?" * len(self.node_cols)))
        self.port_sql = (
            "INSERT INTO ports (%s) VALUES (%s)" % (", ".join(self.port_cols), ", ".join("?" * len(self.port_cols))) if self.ports else None
        )
