/**
 * Fixtures of the conductor unit tests: a complete node row and a task environment over the
 * real hardware registry (fake-hardware and redfish drivers, no mocks).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { TaskEnv } from '../../../src/conductor/tasks/context.ts';
import type { Clock } from '../../../src/domain/clock.ts';
import type { Node } from '../../../src/domain/inventory/model.ts';
import { SecretBox } from '../../../src/domain/secrets.ts';
import { createHardwareRegistry } from '../../../src/drivers/hardware/registry.ts';

/** A node as stored, in `enroll`, driver fake-hardware, with the fake interfaces. */
export function makeNode(overrides: Partial<Node> = {}): Node {
  const fake = 'fake';
  return {
    id: 1,
    version: 1,
    uuid: randomUUID(),
    name: null,
    description: null,
    driver: 'fake-hardware',
    chassis_uuid: null,
    resource_class: null,
    conductor_group: '',
    shard: null,
    owner: null,
    lessee: null,
    instance_uuid: null,
    allocation_uuid: null,
    traits: [],
    driver_info: {},
    driver_internal_info: {},
    instance_info: {},
    properties: {},
    extra: {},
    network_data: {},
    power_state: null,
    target_power_state: null,
    provision_state: 'enroll',
    target_provision_state: null,
    provision_updated_at: null,
    last_error: null,
    fault: null,
    reservation: null,
    maintenance: false,
    maintenance_reason: null,
    protected: false,
    protected_reason: null,
    retired: false,
    retired_reason: null,
    automated_clean: null,
    console_enabled: false,
    clean_step: {},
    deploy_step: {},
    raid_config: {},
    target_raid_config: {},
    inspection_started_at: null,
    inspection_finished_at: null,
    boot_mode: null,
    secure_boot: null,
    bios_interface: fake,
    boot_interface: fake,
    console_interface: fake,
    deploy_interface: fake,
    inspect_interface: fake,
    management_interface: fake,
    network_interface: 'noop',
    power_interface: fake,
    raid_interface: fake,
    rescue_interface: fake,
    storage_interface: 'noop',
    vendor_interface: fake,
    created_at: 0,
    updated_at: null,
    ...overrides,
  };
}

/** A clock that reads a fixed value (epoch ms). */
export function fixedClock(ms: number): Clock {
  return { now: () => ms };
}

/** A task environment over a fresh hardware registry and a fresh secret box. */
export function makeEnv(options: { automatedClean?: boolean; now?: number } = {}): TaskEnv & { box: SecretBox } {
  const box = new SecretBox(randomBytes(32));
  return {
    box,
    hardware: createHardwareRegistry({ redfish: { pollIntervalMs: 20, requestTimeoutMs: 2000 } }),
    secrets: box,
    clock: fixedClock(options.now ?? Date.UTC(2030, 0, 1)),
    settings: { powerTimeoutS: 2, automatedClean: options.automatedClean ?? true },
  };
}
