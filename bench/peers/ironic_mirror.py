"""Mirror esi's bare-metal inventory into the real Ironic's SQLite database.

Used by bench/node-network-list.ts: python-esiclient's `node network list` reads Ironic's node
and port lists, so its baseline runs against the real Ironic 21.4 holding the same nodes and ports
as esi (same uuids, names, MAC addresses and `internal_info.tenant_vif_port_id`). Every row is a
copy of a template node (and its first port) that Ironic itself created through its API, with
those fields replaced; the template is removed afterwards, so Ironic holds exactly the mirrored
nodes.

usage: ironic_mirror.py <sqlite path> <template node uuid>   (JSON on stdin:
       [{"uuid", "name", "ports": [{"uuid", "address", "internal_info"}]}])
prints: one JSON object {"nodes": <rows added>, "ports": <rows added>}
"""
import json
import sqlite3
import sys

from ironic_rows import Template


def main() -> None:
    db_path, template_uuid = sys.argv[1], sys.argv[2]
    wanted = json.load(sys.stdin)
    con = sqlite3.connect(db_path, timeout=60)
    t = Template(con, template_uuid)
    if not t.ports:
        raise SystemExit("template node %s has no port" % template_uuid)
    node, port, node_cols, port_cols, node_sql, port_sql = t.node, t.ports[0], t.node_cols, t.port_cols, t.node_sql, t.port_sql
    nodes = ports = 0
    with con:
        for n in wanted:
            values = dict(node)
            values["uuid"] = n["uuid"]
            values["name"] = n["name"]
            node_id = con.execute(node_sql, [values[c] for c in node_cols]).lastrowid
            nodes += 1
            for p in n["ports"]:
                pv = dict(port)
                pv["uuid"] = p["uuid"]
                pv["address"] = p["address"]
                pv["node_id"] = node_id
                pv["internal_info"] = json.dumps(p.get("internal_info") or {})
                if "name" in pv:
                    pv["name"] = None
                con.execute(port_sql, [pv[c] for c in port_cols])
                ports += 1
        con.execute("DELETE FROM ports WHERE node_id = ?", (node["id"],))
        con.execute("DELETE FROM nodes WHERE id = ?", (node["id"],))
    print(json.dumps({"nodes": nodes, "ports": ports}))


if __name__ == "__main__":
    main()
