"""Read the hardware inventory of every system of esi's lab with Debian's python3-sushy, as
Ironic's redfish inspection does (https://docs.openstack.org/ironic/latest/admin/drivers/redfish.html).

Usage: /usr/bin/python3 sushy_inventory.py <lab-url> [username] [password]

Prints one JSON object: for each system id, what sushy reports -- processors.summary (count of
logical CPUs, architecture), memory_summary.size_gib, ethernet_interfaces.summary (MACs),
simple_storage.disks_sizes_bytes, storage drives (name, size, media type, serial) and
storage.drives_sizes_bytes, each Memory member's capacity (sushy 4.3 has no Memory resource: read with its connector), the manufacturer, model and serial,
and the identity of the system read through its path in lower case (BMCs treat paths case-insensitively).
"""
import json
import sys

import sushy


def value(x):
    """An enum's value, or the plain value (sushy 4.3 mixes both)."""
    return getattr(x, 'value', x)


def main():
    url = sys.argv[1]
    user = sys.argv[2] if len(sys.argv) > 2 else 'admin'
    password = sys.argv[3] if len(sys.argv) > 3 else 'password'
    conn = sushy.Sushy(url + '/redfish/v1', auth=sushy.auth.BasicAuth(user, password))
    out = {}
    for path in sorted(conn.get_system_collection().members_identities):
        system = conn.get_system(path)
        summary = system.processors.summary
        drives = []
        for storage in system.storage.get_members():
            for drive in storage.drives:
                drives.append({'name': drive.name, 'size': drive.capacity_bytes,
                               'media': value(drive.media_type),
                               'serial': drive.serial_number})
        memory = system._conn.get(path + '/Memory').json()
        dimms = [system._conn.get(m['@odata.id']).json()['CapacityMiB'] for m in memory['Members']]
        gpus = [p.identity for p in system.processors.get_members()
                if value(p.processor_type) == 'GPU']
        out[system.identity] = {
            'cpus': summary.count,
            'arch': value(summary.architecture),
            'memory_gib': system.memory_summary.size_gib,
            'dimm_mib': dimms,
            'macs': sorted(system.ethernet_interfaces.summary),
            'simple_storage_sizes': sorted(system.simple_storage.disks_sizes_bytes),
            'storage_drive_sizes': sorted(system.storage.drives_sizes_bytes),
            'drives': drives,
            'gpus': gpus,
            'manufacturer': system.manufacturer,
            'model': system.json.get('Model'),
            'serial': system.serial_number,
            'boot_mode': value(system.boot.mode),
            # The same system through a lower-case path, as some BMCs' links are written.
            'lowercase_path_identity': conn.get_system(path.lower()).identity,
        }
    print(json.dumps(out))


if __name__ == '__main__':
    main()
