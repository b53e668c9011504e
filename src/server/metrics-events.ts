/**
 * The metrics fed by events as they happen (the others are read at scrape time,
 * ./metrics-scrape.ts): one {@link EventMetrics} per server implements the small observer ports
 * that the conductor, the lease lifecycle and the hardware decorator are given by the
 * composition root (src/server/container.ts), so that none of them knows prom-client.
 *
 * | metric                                   | type      | labels                                   | fed by                                        |
 * |------------------------------------------|-----------|------------------------------------------|-----------------------------------------------|
 * | `esi_lease_activation_skew_seconds`      | histogram | `action` (`start`, `end`)                | the lease lifecycle, per due start / end written |
 * | `esi_conductor_stage_duration_seconds`   | histogram | `kind` (`power`, `provision`), `stage`   | the conductor, per stage of a node's work     |
 * | `esi_bmc_call_duration_seconds`          | histogram | `driver`, `interface`, `operation`       | the hardware decorator, per driver call       |
 * | `esi_bmc_call_errors_total`              | counter   | `driver`, `interface`, `operation`, `reason` | the same, per failed call                 |
 * | `esi_deploy_image_bytes_written_total`   | counter   |                                          | the agent deploy, per image write that ended  |
 * | `esi_deploy_image_writes_total`          | counter   | `bytes_reported` (`true`, `false`)       | the same                                      |
 *
 * Every label takes a bounded set of values (driver and method names, provision states, power
 * targets, error reasons): no node, lease or project identifier ever becomes a label.
 * The observers never throw: an observation is a few hash lookups and additions.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import type { LeaseTimingObserver } from '../domain/leasing/index.ts';
import type { ConductorObserver } from '../conductor/stage-report.ts';
import type { BmcCall, BmcCallObserver } from '../drivers/hardware/instrumented.ts';

/** Lease skew buckets, seconds: 10 ms to an hour (the manager aims at well under a second). */
const SKEW_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900, 3600];

/** Stage buckets, seconds: 10 ms (a fake power change) to 30 min (a slow BMC's deploy stage). */
const STAGE_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];

/** BMC call buckets, seconds: 1 ms (fake-hardware) to 2 min (a power change waited out). */
const BMC_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** The event-fed metrics of one server (see the module documentation). */
export class EventMetrics implements LeaseTimingObserver, ConductorObserver, BmcCallObserver {
  readonly #skew: Histogram<'action'>;
  readonly #stages: Histogram<'kind' | 'stage'>;
  readonly #bmc: Histogram<'driver' | 'interface' | 'operation'>;
  readonly #bmcErrors: Counter<'driver' | 'interface' | 'operation' | 'reason'>;
  readonly #bytes: Counter;
  readonly #writes: Counter<'bytes_reported'>;

  /** @param registry where the metrics are registered (the server's) */
  constructor(registry: Registry) {
    const registers = [registry];
    this.#skew = new Histogram({
      name: 'esi_lease_activation_skew_seconds',
      help: "Time from a lease's start (or end) to the lease manager's activation (or expiry) written, seconds; from its creation when that came later.",
      labelNames: ['action'],
      buckets: SKEW_BUCKETS,
      registers,
    });
    this.#stages = new Histogram({
      name: 'esi_conductor_stage_duration_seconds',
      help: "Duration of one stage of a node's conductor work (a power request, a provision state's stage), seconds.",
      labelNames: ['kind', 'stage'],
      buckets: STAGE_BUCKETS,
      registers,
    });
    this.#bmc = new Histogram({
      name: 'esi_bmc_call_duration_seconds',
      help: 'Duration of hardware driver calls to BMCs, failed ones included, seconds.',
      labelNames: ['driver', 'interface', 'operation'],
      buckets: BMC_BUCKETS,
      registers,
    });
    this.#bmcErrors = new Counter({
      name: 'esi_bmc_call_errors_total',
      help: 'Hardware driver calls to BMCs that failed, by reason (refused, unreachable, timeout, invalid-response, invalid-input, other).',
      labelNames: ['driver', 'interface', 'operation', 'reason'],
      registers,
    });
    this.#bytes = new Counter({
      name: 'esi_deploy_image_bytes_written_total',
      help: 'Image bytes the deploy agent reported written to disks by deploys whose image write succeeded.',
      registers,
    });
    this.#writes = new Counter({
      name: 'esi_deploy_image_writes_total',
      help: 'Deploy image writes that succeeded, by whether the agent reported the bytes written (esi agent) or not (ironic-python-agent).',
      labelNames: ['bytes_reported'],
      registers,
    });
  }

  /** {@link LeaseTimingObserver}: one due start or end applied, `skewS` seconds late. */
  leaseBoundary(action: 'start' | 'end', skewS: number): void {
    this.#skew.observe({ action }, Math.max(0, skewS));
  }

  /** {@link ConductorObserver}: one stage of a node's work took `seconds`. */
  stageDone(kind: 'power' | 'provision', stage: string, seconds: number): void {
    this.#stages.observe({ kind, stage }, seconds);
  }

  /** {@link BmcCallObserver}: one driver call settled. */
  bmcCall(call: BmcCall): void {
    const labels = { driver: call.driver, interface: call.iface, operation: call.operation };
    this.#bmc.observe(labels, call.seconds);
    if (call.failure !== null) this.#bmcErrors.inc({ ...labels, reason: call.failure });
  }

  /** A deploy's image write succeeded; `bytes` as the agent reported them, or null. */
  imageWritten(bytes: number | null): void {
    this.#writes.inc({ bytes_reported: String(bytes !== null) });
    if (bytes !== null) this.#bytes.inc(bytes);
  }
}
