"""Drive esi's lab Redfish emulator with Debian's python3-sushy, as Ironic's redfish driver would.

Usage: /usr/bin/python3 sushy_check.py <lab-url> [username] [password]

The lab must have at least three systems. Each authentication mode works on its own system so
that the calling test can check the lab's state per mode afterwards:

  session (sushy.auth.SessionAuth)    -> node-0
  basic   (sushy.auth.BasicAuth)      -> node-1
  auto    (username/password; sushy's SessionOrBasicAuth) -> node-2

For each: read the service root, the system collection and the system, power it on with
reset_system(RESET_ON) and read the state back, set a one-time PXE boot override, read the
system's manager (and its virtual media) and chassis, and the hardware inventory that Ironic's
redfish inspection reads. Finally, wrong credentials must be refused in both auth modes.

Prints one JSON object (the observations) on stdout; exits non-zero on the first failed check.
"""
import json
import sys

import sushy
from sushy import auth as sushy_auth
from sushy import exceptions


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def exercise(conn, system_path, mode):
    out = {'mode': mode}
    # Service root (sushy reads it before authenticating).
    check(conn.redfish_version == '1.11.0', 'RedfishVersion %r' % conn.redfish_version)
    check(conn.identity == 'RootService', 'root Id %r' % conn.identity)
    check(conn.uuid, 'root UUID missing')
    out['root_uuid'] = conn.uuid

    systems = conn.get_system_collection()
    members = sorted(systems.members_identities)
    check(system_path in members, '%s not in %r' % (system_path, members))
    out['systems'] = members

    system = conn.get_system(system_path)
    check(system.identity == system_path.rsplit('/', 1)[1], 'system Id %r' % system.identity)
    check(system.power_state in (sushy.POWER_STATE_ON, sushy.POWER_STATE_OFF),
          'power_state %r' % system.power_state)
    out['power_state_before'] = system.power_state.value
    out['system_uuid'] = system.uuid

    # Power on, then read the state back.
    check(sushy.RESET_ON in system.get_allowed_reset_system_values(), 'RESET_ON not allowed')
    system.reset_system(sushy.RESET_ON)
    system.refresh()
    check(system.power_state == sushy.POWER_STATE_ON, 'after On: %r' % system.power_state)
    out['power_state_after'] = system.power_state.value

    # One-time PXE boot override.
    check(sushy.BOOT_SOURCE_TARGET_PXE in system.get_allowed_system_boot_source_values(),
          'Pxe not an allowed boot source')
    system.set_system_boot_options(sushy.BOOT_SOURCE_TARGET_PXE,
                                   enabled=sushy.BOOT_SOURCE_ENABLED_ONCE)
    system.refresh()
    check(system.boot.target == sushy.BOOT_SOURCE_TARGET_PXE, 'boot target %r' % system.boot.target)
    check(system.boot.enabled == sushy.BOOT_SOURCE_ENABLED_ONCE, 'boot enabled %r' % system.boot.enabled)
    out['boot'] = {'target': system.boot.target.value, 'enabled': system.boot.enabled.value,
                   'mode': system.boot.mode.value}

    # Inventory as Ironic's redfish inspection reads it.
    check(system.memory_summary.size_gib > 0, 'memory %r' % system.memory_summary.size_gib)
    check(system.processors.summary.count > 0, 'cpus %r' % (system.processors.summary,))
    macs = system.ethernet_interfaces.summary
    check(len(macs) == 1, 'NICs %r' % macs)
    check(system.simple_storage.max_size_bytes > 0, 'disk size')
    out['inventory'] = {
        'memory_gib': system.memory_summary.size_gib,
        'cpus': system.processors.summary.count,
        'arch': system.processors.summary.architecture.value,
        'macs': sorted(macs),
        'disk_bytes': system.simple_storage.max_size_bytes,
    }

    # Manager, its virtual media, and the chassis.
    managers = system.managers
    check(len(managers) == 1, 'managers %r' % managers)
    manager = managers[0]
    check(manager.manager_type == sushy.MANAGER_TYPE_BMC, 'manager type %r' % manager.manager_type)
    vmedia = manager.virtual_media.get_members()
    check(len(vmedia) == 1, 'virtual media %r' % vmedia)
    cd = vmedia[0]
    check(cd.inserted is False, 'cd inserted %r' % cd.inserted)
    cd.insert_media('http://127.0.0.1:1/boot.iso')
    cd.refresh()
    check(cd.inserted is True and cd.image == 'http://127.0.0.1:1/boot.iso', 'insert failed')
    cd.eject_media()
    cd.refresh()
    check(cd.inserted is False, 'eject failed')
    out['manager'] = {'id': manager.identity, 'uuid': manager.uuid,
                      'virtual_media': [m.identity for m in vmedia]}
    chassis = system.chassis
    check(len(chassis) == 1 and chassis[0].chassis_type is not None, 'chassis %r' % chassis)
    out['chassis'] = chassis[0].identity
    return out


def refused(make):
    try:
        conn = make()
        conn.get_system_collection().get_members()
    except exceptions.AccessError:
        return True
    return False


def main():
    url = sys.argv[1]
    user = sys.argv[2] if len(sys.argv) > 2 else 'admin'
    password = sys.argv[3] if len(sys.argv) > 3 else 'password'
    results = []

    session_auth = sushy_auth.SessionAuth(username=user, password=password)
    conn = sushy.Sushy(url, auth=session_auth)
    check(session_auth.get_session_key() is not None, 'no session token')
    check(session_auth.get_session_resource_id() is not None, 'no session Location')
    result = exercise(conn, '/redfish/v1/Systems/node-0', 'session')
    sessions = conn.get_session_service().sessions.get_members()
    check(len(sessions) >= 1, 'sessions %r' % sessions)
    result['session_user'] = sessions[0].username
    session_auth.close()  # DELETE the session
    check(session_auth.get_session_key() is None, 'session not closed')
    results.append(result)

    conn = sushy.Sushy(url, auth=sushy_auth.BasicAuth(username=user, password=password))
    results.append(exercise(conn, '/redfish/v1/Systems/node-1', 'basic'))

    conn = sushy.Sushy(url, username=user, password=password)
    check(isinstance(conn._auth, sushy_auth.SessionOrBasicAuth), 'default auth')
    check(conn._auth.get_session_key() is not None, 'auto did not pick a session')
    results.append(exercise(conn, '/redfish/v1/Systems/node-2', 'auto'))

    check(refused(lambda: sushy.Sushy(
        url, auth=sushy_auth.SessionAuth(username=user, password='wrong'))), 'bad session accepted')
    check(refused(lambda: sushy.Sushy(
        url, auth=sushy_auth.BasicAuth(username=user, password='wrong'))), 'bad basic accepted')

    print(json.dumps({'ok': True, 'results': results}))


if __name__ == '__main__':
    main()
