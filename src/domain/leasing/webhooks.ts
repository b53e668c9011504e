/**
 * Webhook subscriptions (additive to esi-leap, `/v1/webhooks`): a project registers URLs that
 * receive its leasing events, signed with a secret it chooses (rules in `./webhook-rules.ts`;
 * sending in `./webhook-delivery.ts`). Secrets are write-only: sealed at rest with the server's
 * secret box and never returned (shown as `******`).
 *
 * Policy rules: `esi_leap:webhook:create` and `esi_leap:webhook:get_all` (any leasing role,
 * for the caller's project; another project needs `esi_leap:webhook:webhook_admin`),
 * `esi_leap:webhook:get` (admin or the webhook's project; others get 404),
 * `esi_leap:webhook:update`, `esi_leap:webhook:delete` (same).
 *
 * URLs: a webhook admin's may name any host (internal receivers); everyone else's must reach a
 * public address unless the operator allows private ones (`./webhook-targets.ts`).
 */
import type { AuthContext } from '../auth.ts';
import type { Clock } from '../clock.ts';
import { ConflictError, InvalidInputError, NotFoundError } from '../errors.ts';
import { newUuid } from '../ids.ts';
import type { Policy } from '../policy/types.ts';
import type { SecretBox } from '../secrets.ts';
import type { LeasingAccess } from './access.ts';
import { checkName } from './inputs.ts';
import {
  checkEventTypes,
  checkWebhookSecret,
  checkWebhookUrl,
  WEBHOOKS_PER_PROJECT,
  type DeliveryStatus,
  type Webhook,
  type WebhookDelivery,
} from './webhook-rules.ts';
import { PUBLIC_ONLY, type WebhookTargets } from './webhook-targets.ts';

/** The webhook store (implemented by `src/store/leasing/webhooks.ts`). */
export interface WebhookRepository {
  listWebhooks(query: { projectId?: string }): Promise<Webhook[]>;
  getWebhook(uuid: string): Promise<Webhook | null>;
  countWebhooks(projectId: string): Promise<number>;
  insertWebhook(webhook: Webhook, sealedSecret: string): Promise<void>;
  /** Update fields; the secret only when `sealedSecret` is given. */
  updateWebhook(webhook: Webhook, sealedSecret?: string): Promise<void>;
  /** Delete a webhook and its deliveries. */
  deleteWebhook(uuid: string): Promise<void>;
  /** Deliveries of a webhook, newest first. */
  listDeliveries(webhookUuid: string, query: { status?: DeliveryStatus; limit: number }): Promise<WebhookDelivery[]>;
  /** Pending deliveries due at `now`, oldest first. */
  dueDeliveries(now: number, limit: number): Promise<WebhookDelivery[]>;
  /**
   * Take a delivery for one attempt: a conditional update of `next_attempt_at` from the value
   * read to `until`, so that one worker (in any process) attempts it; if that worker dies, the
   * delivery is due again at `until`. @returns true when taken
   */
  claimDelivery(id: number, seenNextAttemptAt: number, until: number): Promise<boolean>;
  /** Where and with what (sealed) secret a webhook is sent, or null when it is gone. */
  target(webhookUuid: string): Promise<{ url: string; sealedSecret: string; enabled: boolean } | null>;
  /** Record an attempt's outcome. */
  recordAttempt(id: number, outcome: DeliveryOutcome): Promise<void>;
}

/** What an attempt changes on a delivery row. */
export interface DeliveryOutcome {
  readonly status: DeliveryStatus;
  readonly attempts: number;
  readonly nextAttemptAt: number;
  readonly lastAttemptAt: number;
  readonly lastStatusCode: number | null;
  readonly lastError: string | null;
  readonly deliveredAt: number | null;
}

/** `POST /v1/webhooks`. */
export interface WebhookCreateInput {
  readonly url: string;
  readonly secret: string;
  readonly name?: string | null;
  readonly eventTypes?: readonly string[];
  readonly enabled?: boolean;
  /** Project id or name (admins only; default the caller's). */
  readonly projectId?: string;
}

/** `PATCH /v1/webhooks/{uuid}`. */
export interface WebhookUpdateInput {
  readonly url?: string;
  readonly secret?: string;
  readonly name?: string | null;
  readonly eventTypes?: readonly string[];
  readonly enabled?: boolean;
}

/** Most deliveries one listing returns. */
export const DELIVERY_LIST_MAX = 1000;

function target(w: Pick<Webhook, 'project_id'>): Record<string, unknown> {
  return { 'webhook.project_id': w.project_id };
}

/** Webhook subscriptions of the lease API. */
export class WebhookService {
  constructor(
    private readonly repo: WebhookRepository,
    private readonly policy: Policy,
    private readonly access: LeasingAccess,
    private readonly secrets: SecretBox,
    private readonly clock: Clock,
    private readonly targets: WebhookTargets = PUBLIC_ONLY,
  ) {}

  /**
   * Webhooks the caller may see: its project's, or (webhook admins) any project's.
   * @throws ForbiddenError (role; another project without admin), NotFoundError (project)
   */
  async list(ctx: AuthContext, input: { projectId?: string }): Promise<Webhook[]> {
    this.policy.authorize('esi_leap:webhook:get_all', {}, ctx);
    const projectId = await this.projectFor(ctx, input.projectId);
    return this.repo.listWebhooks(projectId !== undefined ? { projectId } : {});
  }

  /** One webhook the caller may see. @throws NotFoundError */
  get(ctx: AuthContext, uuid: string): Promise<Webhook> {
    return this.find(ctx, uuid);
  }

  /**
   * Register a webhook.
   * @throws ForbiddenError, NotFoundError (project), InvalidInputError (url, secret, types, name),
   *   ConflictError (the project has {@link WEBHOOKS_PER_PROJECT} already)
   */
  async create(ctx: AuthContext, input: WebhookCreateInput): Promise<Webhook> {
    const projectId = (await this.projectFor(ctx, input.projectId)) ?? this.access.projectOf(ctx);
    this.policy.authorize('esi_leap:webhook:create', target({ project_id: projectId }), ctx);
    const url = this.checkUrl(ctx, input.url);
    const secret = checkWebhookSecret(input.secret);
    const now = this.clock.now();
    const webhook: Webhook = {
      uuid: newUuid(),
      project_id: projectId,
      name: checkName(input.name),
      url,
      event_types: checkEventTypes(input.eventTypes ?? []),
      enabled: input.enabled ?? true,
      created_at: now,
      updated_at: now,
    };
    if ((await this.repo.countWebhooks(projectId)) >= WEBHOOKS_PER_PROJECT) {
      throw new ConflictError(`Project ${projectId} already has ${WEBHOOKS_PER_PROJECT} webhooks, the most allowed.`, 'WebhookLimit');
    }
    await this.repo.insertWebhook(webhook, this.secrets.seal(secret));
    return webhook;
  }

  /**
   * Change a webhook (a new secret replaces the old one).
   * @throws NotFoundError, ForbiddenError, InvalidInputError
   */
  async update(ctx: AuthContext, uuid: string, input: WebhookUpdateInput): Promise<Webhook> {
    const found = await this.find(ctx, uuid);
    this.policy.authorize('esi_leap:webhook:update', target(found), ctx, `Access was denied to webhook ${found.uuid}.`);
    if (Object.keys(input).length === 0)
      throw new InvalidInputError('Nothing to update: give url, secret, name, event_types or enabled.', 'InvalidWebhook');
    const updated: Webhook = {
      ...found,
      ...(input.url !== undefined ? { url: this.checkUrl(ctx, input.url) } : {}),
      ...(input.name !== undefined ? { name: checkName(input.name) } : {}),
      ...(input.eventTypes !== undefined ? { event_types: checkEventTypes(input.eventTypes) } : {}),
      ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
      updated_at: this.clock.now(),
    };
    const sealed = input.secret !== undefined ? this.secrets.seal(checkWebhookSecret(input.secret)) : undefined;
    await this.repo.updateWebhook(updated, sealed);
    return updated;
  }

  /** Delete a webhook and its delivery history. @throws NotFoundError, ForbiddenError */
  async remove(ctx: AuthContext, uuid: string): Promise<void> {
    const found = await this.find(ctx, uuid);
    this.policy.authorize('esi_leap:webhook:delete', target(found), ctx, `Access was denied to webhook ${found.uuid}.`);
    await this.repo.deleteWebhook(found.uuid);
  }

  /**
   * A webhook's deliveries, newest first: status, attempts, last HTTP status or error.
   * @param limit 1…{@link DELIVERY_LIST_MAX} (default 100)
   * @throws NotFoundError, InvalidInputError
   */
  async deliveries(ctx: AuthContext, uuid: string, query: { status?: string; limit?: number }): Promise<WebhookDelivery[]> {
    const found = await this.find(ctx, uuid);
    const status = query.status;
    if (status !== undefined && !['pending', 'delivered', 'failed'].includes(status)) {
      throw new InvalidInputError(`Invalid status ${status}: expected pending, delivered or failed.`, 'InvalidStatus');
    }
    const limit = query.limit ?? 100;
    if (!Number.isInteger(limit) || limit < 1 || limit > DELIVERY_LIST_MAX)
      throw new InvalidInputError(`Invalid limit ${limit}: expected 1 to ${DELIVERY_LIST_MAX}.`, 'InvalidLimit');
    return this.repo.listDeliveries(found.uuid, { ...(status !== undefined ? { status: status as DeliveryStatus } : {}), limit });
  }

  /** {@link checkWebhookUrl} for the caller: webhook admins may name any host. @throws InvalidInputError */
  private checkUrl(ctx: AuthContext, url: string): string {
    return checkWebhookUrl(url, this.policy.check('esi_leap:webhook:webhook_admin', {}, ctx) ? undefined : this.targets);
  }

  /**
   * The project a request acts for: webhook admins name any project (404 for an unknown one;
   * undefined when none is named); others their own project only — naming any other, existing
   * or not, is the same 403, checked before any lookup.
   * @throws ForbiddenError, NotFoundError
   */
  private async projectFor(ctx: AuthContext, ident: string | undefined): Promise<string | undefined> {
    if (this.policy.check('esi_leap:webhook:webhook_admin', {}, ctx))
      return ident === undefined ? undefined : (await this.access.resolveProject(ident)).id;
    const mine = this.access.projectOf(ctx);
    if (ident !== undefined && !(await this.access.isOwnProject(ctx, ident)))
      this.policy.authorize('esi_leap:webhook:webhook_admin', {}, ctx);
    return mine;
  }

  private async find(ctx: AuthContext, uuid: string): Promise<Webhook> {
    const found = await this.repo.getWebhook(uuid);
    if (!found || !this.policy.check('esi_leap:webhook:get', target(found), ctx)) {
      throw new NotFoundError('webhook', uuid, `Webhook ${uuid} could not be found.`, 'WebhookNotFound');
    }
    return found;
  }
}
