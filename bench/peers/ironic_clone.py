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

from ironic_rows import Template


def mac_for(index: int, port_no: int) -> str:
    """A locally administered MAC 52:54:1p:xx:xx:xx unique per (index, port_no), index < 2**24.

    The template's own ports must use another third octet (bench/peers/ironic.ts uses 52:54:00).
    """
    return "52:54:%02x:%02x:%02x:%02x" % (0x10 + (port_no & 0x0F), (index >> 16) & 0xFF, (index >> 8) & 0xFF, index & 0xFF)


def main() -> None:
    db_path, template_uuid, first, count, prefix = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    con = sqlite3.connect(db_path, timeout=60)
    t = Template(con, template_uuid)
    node, ports, node_cols, port_cols, node_sql, port_sql = t.node, t.ports, t.node_cols, t.port_cols, t.node_sql, t.port_sql
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
