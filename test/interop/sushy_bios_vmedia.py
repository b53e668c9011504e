"""Drive the lab's BIOS, virtual media, storage and update service with Debian's python3-sushy,
the way Ironic 21.4's redfish BIOS, RAID, firmware and virtual-media code does.

Usage: /usr/bin/python3 sushy_bios_vmedia.py <base-url> <system-path> [username] [password]

1. BIOS: read system.bios attributes and the attribute registry (bios.get_attribute_registry),
   stage a change with bios.set_attributes (PATCH of the settings object), check it is pending,
   reset the system (ForceRestart) and check the change was applied.
2. Virtual media: find the CD of the system's manager, insert_media an image, read it back,
   eject_media.
3. Storage: list the system's storage, its drives and volumes.

Prints one JSON object with the observations; exits non-zero on the first failed check.
"""
import json
import os
import sys

import sushy
from sushy import main as sushy_main

# Debian's python3-sushy ships without sushy/standard_registries/ (the DMTF message registries
# sushy packages upstream), so Sushy.registries fails before it reads the BMC's own registries.
# Without those packaged files there are simply no standard registries: say so, and let sushy
# read the lab's registries as it would on a complete install.
if not os.path.isdir(os.path.join(os.path.dirname(sushy_main.__file__), 'standard_registries')):
    sushy_main.Sushy._get_standard_message_registry_collection = lambda self: []


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def main():
    url, system_path = sys.argv[1], sys.argv[2]
    user = sys.argv[3] if len(sys.argv) > 3 else 'admin'
    password = sys.argv[4] if len(sys.argv) > 4 else 'password'
    conn = sushy.Sushy(url, username=user, password=password)
    system = conn.get_system(system_path)
    out = {}

    bios = system.bios
    out['attributes_before'] = dict(bios.attributes)
    registry = bios.get_attribute_registry()
    check(registry is not None, 'no attribute registry')
    entries = {a.name: a for a in registry.registry_entries.attributes}
    check('ProcVirtualization' in entries, 'registry lacks ProcVirtualization')
    out['registry_values'] = [v['ValueName'] for v in entries['ProcVirtualization'].allowable_values]
    out['registry_type'] = entries['NumaNodesPerSocket'].attribute_type
    bios.set_attributes({'ProcVirtualization': 'Disabled', 'NumaNodesPerSocket': 3})
    bios.refresh()
    out['pending'] = dict(bios.pending_attributes)
    system.reset_system(sushy.RESET_FORCE_RESTART)
    bios.refresh()
    out['attributes_after'] = dict(bios.attributes)

    manager = system.managers[0]
    cd = None
    for vm in manager.virtual_media.get_members():
        if sushy.VIRTUAL_MEDIA_CD in vm.media_types:
            cd = vm
    check(cd is not None, 'no virtual CD')
    cd.insert_media('http://127.0.0.1:9/ipa.iso', inserted=True, write_protected=True)
    cd.refresh()
    out['vmedia_inserted'] = {'image': cd.image, 'inserted': cd.inserted}
    cd.eject_media()
    cd.refresh()
    out['vmedia_ejected'] = {'image': cd.image, 'inserted': cd.inserted}

    storages = system.storage.get_members()
    check(len(storages) == 1, 'storage %r' % storages)
    st = storages[0]
    out['storage'] = {'id': st.identity, 'drives': len(st.drives), 'volumes': len(st.volumes.get_members()),
                      'raid_types': sorted(str(t) for t in st.storage_controllers[0].raid_types)}
    print(json.dumps({'ok': True, 'out': out}))


if __name__ == '__main__':
    main()
