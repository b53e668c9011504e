/**
 * The leasing area (esi-leap v1): offers, leases, events, the node list and console tokens,
 * assembled over one repository, the node gateway (inventory) and the project directory
 * (identity). The lease manager (`src/conductor/lease-manager.ts`) drives
 * {@link Leasing.lifecycle} from timers and is attached as the scheduler.
 */
import type { Clock } from '../clock.ts';
import type { Policy } from '../policy/types.ts';
import type { SecretBox } from '../secrets.ts';
import { LeasingAccess } from './access.ts';
import { ConsoleTokenService } from './console.ts';
import { LeasingEnricher } from './enrich.ts';
import { EventService } from './events.ts';
import { LeaseService } from './leases.ts';
import { LeaseLifecycle, type LeasingLog, type LifecycleOptions } from './lifecycle.ts';
import { LeasingNodeService } from './nodes.ts';
import { LeaseNotices } from './notices.ts';
import { OfferService, type LeaseLimits } from './offers.ts';
import { LeasePolicyService } from './owner-policies.ts';
import type { NodeGateway, ProjectDirectory } from './ports.ts';
import { QuotaService } from './quotas.ts';
import type { LeasingRepository } from './repository.ts';
import { LeaseRequestService } from './requests.ts';
import { NO_SCHEDULER, type LeaseScheduler } from './scheduler.ts';
import { WebhookService, type WebhookRepository } from './webhooks.ts';
import type { WebhookTargets } from './webhook-targets.ts';

export * from './model.ts';
export type { NodeGateway, ProjectDirectory, LeasableNode } from './ports.ts';
export { NodeBusyError } from './ports.ts';
export type { LeasingRepository, LeasingTx, LeasingReader, OfferQuery, LeaseQuery, EventQuery } from './repository.ts';
export type { LeaseScheduler, ScheduleRef } from './scheduler.ts';
export { NO_SCHEDULER } from './scheduler.ts';
export type { LeasingLog, LifecycleOptions, LeaseTimingObserver } from './lifecycle.ts';
export { LeaseLifecycle, NODE_CLAIMED } from './lifecycle.ts';
export type { LeaseLimits } from './offers.ts';
export type { OfferCreateInput, ClaimInput, LeaseCreateInput, OfferListInput, LeaseListInput } from './inputs.ts';
export type { EventListInput } from './events.ts';
export type { NodeListInput } from './nodes.ts';
export { DEFAULT_CONSOLE_TOKEN_TTL_S, MAX_CONSOLE_TOKEN_TTL_S } from './console.ts';
export { formatLeaseTime, parseLeaseTime } from './time.ts';
export { leaseNextBoundary, offerNextBoundary, LEASE_WAITING } from './status.ts';
export type { LeaseQuota, QuotaUsage } from './quota-rules.ts';
export type { QuotaView, QuotaInput } from './quotas.ts';
export type { LeasePolicy } from './policy-rules.ts';
export type { LeasePolicyView, LeasePolicyCreateInput, LeasePolicyUpdateInput, LeasePolicyListInput } from './owner-policies.ts';
export type { LeaseRequestInput, LeaseRequestGroup } from './requests.ts';
export { RequestUnsatisfiableError } from './requests.ts';
export type { Webhook, WebhookDelivery, DeliveryStatus } from './webhook-rules.ts';
export { signWebhook } from './webhook-rules.ts';
export type { WebhookRepository, WebhookCreateInput, WebhookUpdateInput } from './webhooks.ts';
export { WebhookDeliverer, WebhookAddressRefused, type WebhookTransport, type DeliveryOptions } from './webhook-delivery.ts';
export { isRestrictedAddress, PUBLIC_ONLY, type WebhookTargets } from './webhook-targets.ts';
export { LeaseNotices } from './notices.ts';
export { parseExpression, matches, type Expr, type HardwareFacts } from './expression.ts';

/** What the leasing area is built from. */
export interface LeasingDeps {
  readonly repo: LeasingRepository;
  readonly nodes: NodeGateway;
  readonly projects: ProjectDirectory;
  readonly policy: Policy;
  readonly clock: Clock;
  readonly log: LeasingLog;
  readonly limits: LeaseLimits;
  readonly lifecycle?: LifecycleOptions;
  /** Webhook subscriptions and their outbox. */
  readonly webhooks: WebhookRepository;
  /** Seals webhook secrets at rest. */
  readonly secrets: SecretBox;
  /** Warning time of the ending-soon notice, ms (esi-leap email cron: 1 day). */
  readonly warningMs: number;
  /** Where tenants' webhooks may be sent (default: public addresses only). */
  readonly webhookTargets?: WebhookTargets;
}

/** The leasing services. */
export interface Leasing {
  readonly offers: OfferService;
  readonly leases: LeaseService;
  readonly events: EventService;
  readonly nodes: LeasingNodeService;
  readonly consoleTokens: ConsoleTokenService;
  /** Lease requests by hardware (all or none). */
  readonly requests: LeaseRequestService;
  /** Project quotas (admin-set). */
  readonly quotas: QuotaService;
  /** Owner lease policies. */
  readonly policies: LeasePolicyService;
  /** Webhook subscriptions and delivery status. */
  readonly webhooks: WebhookService;
  /** Ending-soon notices (scanned by the webhook worker). */
  readonly notices: LeaseNotices;
  /** Node-facing transitions, driven by the lease manager. */
  readonly lifecycle: LeaseLifecycle;
  readonly repo: LeasingRepository;
  /** Attach the lease manager (or another scheduler) that receives change notifications. */
  setScheduler(scheduler: LeaseScheduler): void;
}

/** Assemble the leasing services. */
export function createLeasing(deps: LeasingDeps): Leasing {
  let scheduler: LeaseScheduler = NO_SCHEDULER;
  const getScheduler = (): LeaseScheduler => scheduler;
  const { repo, nodes, projects, policy, clock, limits } = deps;
  const access = new LeasingAccess(policy, projects, nodes, repo);
  const enricher = new LeasingEnricher(nodes, projects, repo);
  const lifecycle = new LeaseLifecycle(repo, nodes, clock, deps.log, getScheduler, deps.lifecycle);
  const common = { repo, policy, access, enricher, lifecycle, scheduler: getScheduler, clock, limits };
  return {
    offers: new OfferService(common),
    leases: new LeaseService(common),
    events: new EventService(repo, policy, access),
    nodes: new LeasingNodeService(nodes, projects, repo, policy, access, clock),
    consoleTokens: new ConsoleTokenService(repo, policy, access, clock),
    requests: new LeaseRequestService({ repo, nodes, policy, access, enricher, scheduler: getScheduler, clock, limits }),
    quotas: new QuotaService(repo, policy, access, projects, clock),
    policies: new LeasePolicyService(repo, policy, access, nodes, projects, clock),
    webhooks: new WebhookService(deps.webhooks, policy, access, deps.secrets, clock, deps.webhookTargets),
    notices: new LeaseNotices(repo, clock, deps.warningMs),
    lifecycle,
    repo,
    setScheduler(s: LeaseScheduler) {
      scheduler = s;
    },
  };
}
