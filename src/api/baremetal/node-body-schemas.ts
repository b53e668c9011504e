/**
 * Request body schemas of the node sub-resource routes (TypeBox), for the document
 * (`/openapi/baremetal.json`) and the routes' checks: the boot mode, the target RAID
 * configuration, a VIF attach, an image capture (esi) and a vendor passthru call (Ironic API
 * reference, https://docs.openstack.org/api-ref/baremetal/; Ironic 21.4
 * `ironic/api/controllers/v1/node.py`).
 *
 * These routes answer Ironic's own messages for a bad body, and Ironic checks the node (404)
 * before the values, so the routes check a body's shape and keys against these schemas
 * ({@link unexpectedKeys}) and the domain checks the values (after the node's visibility); the
 * schemas say what the domain accepts.
 */
import { Type, type TObject } from '@sinclair/typebox';
import { RAID_LEVELS } from '../../domain/hardware/raid.ts';
import type { JsonObject } from '../../domain/inventory/masking.ts';

const Str = Type.String();

/**
 * `PUT /v1/nodes/{node}/states/boot_mode` (≥ 1.76; Ironic `NodeStatesController.boot_mode`):
 * `{"target": "uefi" | "bios"}`. The value is the domain's to check
 * (`NodeHardwareService.setBootMode`).
 */
export const BootModeBody = Type.Object(
  { target: Type.Union([Type.Literal('uefi'), Type.Literal('bios')]) },
  { additionalProperties: false },
);

/** One wanted logical disk of a target RAID configuration (Ironic `raid_config_schema.json`). */
const LogicalDisk = Type.Object(
  {
    size_gb: Type.Union([Type.Integer({ minimum: 0 }), Type.Literal('MAX')], { description: 'GiB, or MAX for all the space left' }),
    raid_level: Type.Union(RAID_LEVELS.map((l) => Type.Literal(l))),
    volume_name: Type.Optional(Type.String({ minLength: 1 })),
    is_root_volume: Type.Optional(Type.Boolean()),
    share_physical_disks: Type.Optional(Type.Boolean()),
    disk_type: Type.Optional(Type.Union([Type.Literal('hdd'), Type.Literal('ssd')])),
    interface_type: Type.Optional(Type.Union([Type.Literal('sata'), Type.Literal('scsi'), Type.Literal('sas')])),
    number_of_physical_disks: Type.Optional(Type.Integer({ minimum: 1 })),
    controller: Type.Optional(Type.String({ minLength: 1 })),
    physical_disks: Type.Optional(Type.Array(Str)),
  },
  { additionalProperties: false },
);

/**
 * `PUT /v1/nodes/{node}/states/raid` (≥ 1.12; Ironic `NodeStatesController.raid` and
 * `ironic/drivers/raid_config_schema.json`): the node's `target_raid_config`, `{}` to clear it.
 * Checked by the domain (`parseRaidTarget`, src/domain/hardware/raid.ts), after the node's
 * RAID interface; esi's drivers build RAID levels 0, 1, 5, 6 and 1+0 only.
 */
export const RaidTargetBody = Type.Object(
  { logical_disks: Type.Optional(Type.Array(LogicalDisk, { minItems: 1 })) },
  { additionalProperties: false },
);

/**
 * `POST /v1/nodes/{node}/vifs` (≥ 1.28; Ironic `NodeVIFController.post`, `VIF_VALIDATOR`):
 * the Neutron port to attach (`id`), optionally the node's port or portgroup to bind it to (≥
 * 1.67; esi has no portgroup binding). Checked by the networking domain (src/domain/networking/vifs.ts).
 */
export const VifAttachBody = Type.Object(
  {
    id: Type.String({ minLength: 1, description: 'Neutron port UUID or name' }),
    port_uuid: Type.Optional(Str),
    portgroup_uuid: Type.Optional(Str),
  },
  { additionalProperties: false },
);

/**
 * `POST /v1/nodes/{node}/capture` (an esi addition, src/domain/deploy/capture.ts): the Glance
 * image, created for the capture and still without data, that receives the node's disk.
 */
export const CaptureBody = Type.Object({ image_id: Type.String({ format: 'uuid' }) }, { additionalProperties: false });

/**
 * A vendor passthru call's arguments (`{GET,POST,PUT,PATCH,DELETE}
 * /v1/nodes/{node}/vendor_passthru[/{method}]`; Ironic `NodeVendorPassthruController._default`):
 * any JSON object, or no body (no arguments); the method validates them.
 */
export const VendorPassthruArgs = Type.Record(Type.String(), Type.Unknown());

/** The keys of `body` that `schema` (an object schema without other properties) does not name. */
export function unexpectedKeys(schema: TObject, body: JsonObject): string[] {
  return Object.keys(body).filter((k) => !Object.hasOwn(schema.properties, k));
}
