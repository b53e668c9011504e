"""Compute what OpenStack Ironic 21.4's redfish inspect interface would record for Redfish
systems, by running Ironic's own code (Debian's python3-ironic) over Debian's python3-sushy.

Usage: /usr/bin/python3 ironic_redfish_inspect.py <bmc-url> <system path>...

For each system path prints, in one JSON object keyed by the path, the essential properties as
``RedfishInspect.inspect_hardware`` derives them (ironic/drivers/modules/redfish/inspect.py):
``cpus`` and ``cpu_arch`` from ``processors.summary`` through ``CPU_ARCH_MAP``, ``memory_mb``
from ``memory_summary.size_gib``, ``local_gb`` from ``RedfishInspect._detect_local_gb``, the MACs
Ironic creates ports for (``redfish_utils.get_enabled_macs``, lower-cased) and the
``boot_mode`` capability (``BOOT_MODE_MAP`` of ``system.boot.mode``, null without one).
"""
import json
import sys
import types

import sushy
from ironic.drivers.modules.redfish import inspect as redfish_inspect
from ironic.drivers.modules.redfish import utils as redfish_utils


def main():
    url = sys.argv[1]
    conn = sushy.Sushy(url + '/redfish/v1', auth=sushy.auth.BasicAuth('admin', 'password'))
    out = {}
    for path in sys.argv[2:]:
        system = conn.get_system(path)
        # The two helpers read only task.node.uuid (for their log messages).
        task = types.SimpleNamespace(node=types.SimpleNamespace(uuid=path))
        count, arch = system.processors.summary
        mode = system.boot.mode
        out[path] = {
            'cpus': count,
            'cpu_arch': redfish_inspect.CPU_ARCH_MAP.get(arch),
            'memory_mb': system.memory_summary.size_gib * 1024,
            'local_gb': redfish_inspect.RedfishInspect._detect_local_gb(None, task, system),
            'macs': sorted(mac.lower() for mac in redfish_utils.get_enabled_macs(task, system)),
            'boot_mode': redfish_inspect.BOOT_MODE_MAP[mode] if mode else None,
        }
    print(json.dumps(out))


if __name__ == '__main__':
    main()
