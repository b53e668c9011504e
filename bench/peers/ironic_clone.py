"""Duplicate a template node (and its ports) in the real Ironic's SQLite database.

Used by bench/peers/ironic.ts to seed thousands of nodes fast: creating each node through
Ironic's API costs ~50 ms, copying rows costs ~0.1 ms. Every copy gets a new uuid, a name
``<prefix><index>`` and, per port, a new uuid and a MAC address derived from the index; every
other column (properties, driver_info, extra, states, interfaces, timestamps) is the template's,
so the copies are what Ironic itself would have written for the same request.

usage: ironic_clone.py <sqlite path> <template node uuid> <first index> <count> <name prefix>
prints: one JSON object {"nodes": <rows added>, "ports": <rows added>}
"""
import json
import sqlite3
import sys
import uuid


def mac_for(index: int, port_no: int) -> str:
    """A locally administered MAC 52:54:1p:xx:xx:xx unique per (index, port_no), index < 2**24.

    The template's own ports must use another third octet (bench/peers/ironic.ts uses 52:54:00).
    """
    return "52:54:%02x:%02x:%02x:%02x" % (0x10 + (port_no & 0x0F), (index >> 16) & 0xFF, (index >> 8) & 0xFF, index & 0xFF)


def main() -> None:
    db_path, template_uuid, first, count, prefix = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    con = sqlite3.connect(db_path, timeout=60)
    con.row_factory = sqlite3.Row
    node = con.execute("SELECT * FROM nodes WHERE uuid = ?", (template_uuid,)).fetchone()
    if node is None:
        raise SystemExit("template node %s not found" % template_uuid)
    ports = con.execute("SELECT * FROM ports WHERE node_id = ? ORDER BY id", (node["id"],)).fetchall()
    node_cols = [c for c in node.keys() if c != "id"]
    port_cols = [c for c in ports[0].keys() if c != "id"] if ports else []
    node_sql = "INSERT INTO nodes (%s) VALUES (%s)" % (", ".join(node_cols), ", ".join("?" * len(node_cols)))
    port_sql = "INSERT INTO ports (%s) VALUES (%s)" % (", ".join(port_cols), ", ".join("?" * len(port_cols))) if ports else None
    added_ports = 0
    with con:
        for i in range(first, first + count):
            values = dict(node)
            values["uuid"] = str(uuid.uuid4())
            values["name"] = "%s%05d" % (prefix, i)
            cur = con.execute(node_sql, [values[c] for c in node_cols])
            node_id = cur.lastrowid
            for n, port in enumerate(ports):
                pv = dict(port)
                pv["uuid"] = str(uuid.uuid4())
                pv["address"] = mac_for(i, n)
                pv["node_id"] = node_id
                if pv.get("name") is not None:
                    pv["name"] = "%s-%d" % (values["name"], n)
                con.execute(port_sql, [pv[c] for c in port_cols])
                added_ports += 1
    print(json.dumps({"nodes": count, "ports": added_ports}))


if __name__ == "__main__":
    main()
