/**
 * The "parse" step of the application credential routes (routes/app-credentials.ts) and of the
 * `application_credential` authentication method (`POST /v3/auth/tokens`, routes/auth.ts):
 * schemas after Keystone's (keystone/application_credential/schema.py
 * `application_credential_create_request_body`, keystone/auth/schema.py) and their translation
 * into the inputs of `ApplicationCredentials`.
 *
 * Wire rules: `access_rules` (a list of allowed API calls) is not supported — a non-empty list
 * is a 400 saying so; a non-null `system` likewise; `project_id` and `id` are ignored (Keystone
 * takes the project from the token and generates the id). `expires_at` is ISO 8601, UTC when it
 * names no offset (Keystone's `parse_expiration_date` appends `Z`). An authentication request
 * with this method may not ask for a scope (401, Keystone's `ApplicationCredentialAuthError`).
 */
import { Type } from '@sinclair/typebox';
import { InvalidInputError, UnauthorizedError } from '../../domain/errors.ts';
import type { AppCredentialAuth, AppCredentialInput } from '../../domain/identity/index.ts';
import { IdString, LongName, Password } from './schemas.ts';
import { Nullable, parseBody } from './validation.ts';

const RoleRef = Type.Object(
  { id: Type.Optional(IdString), name: Type.Optional(LongName) },
  { additionalProperties: false, minProperties: 1, maxProperties: 1 },
);

/** `POST /v3/users/{user_id}/application_credentials`. */
export const AppCredentialCreateBody = Type.Object(
  {
    application_credential: Type.Object(
      {
        id: Type.Optional(Type.String({ maxLength: 64 })),
        name: LongName,
        description: Type.Optional(Nullable(Type.String({ maxLength: 65_535 }))),
        secret: Type.Optional(Nullable(Password)),
        expires_at: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
        project_id: Type.Optional(Type.String({ maxLength: 64 })),
        roles: Type.Optional(Type.Array(RoleRef, { maxItems: 100 })),
        unrestricted: Type.Optional(Nullable(Type.Boolean())),
        access_rules: Type.Optional(Type.Array(Type.Object({}), { maxItems: 100 })),
        system: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

const DomainRef = Type.Object({ id: Type.Optional(IdString), name: Type.Optional(LongName) });

/** `POST /v3/auth/tokens` with the `application_credential` method. */
export const AppCredentialAuthBody = Type.Object(
  {
    auth: Type.Object({
      identity: Type.Object({
        methods: Type.Array(Type.String(), { minItems: 1 }),
        application_credential: Type.Optional(
          Type.Object({
            id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
            name: Type.Optional(LongName),
            secret: Password,
            user: Type.Optional(
              Type.Object({
                id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
                name: Type.Optional(LongName),
                domain: Type.Optional(DomainRef),
              }),
            ),
          }),
        ),
      }),
      scope: Type.Optional(Type.Unknown()),
    }),
  },
  { additionalProperties: false },
);

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * Keystone's `expires_at`: ISO 8601, UTC unless an offset is given.
 * @returns epoch ms
 * @throws InvalidInputError (Keystone's `ValidationTimeStampError` text)
 */
export function parseExpiry(text: string): number {
  const withZone = /(?:Z|[+-]\d{2}:?\d{2})$/i.test(text) ? text : `${text}Z`;
  const ms = TIMESTAMP.test(text) ? Date.parse(withZone.replace(/(\.\d{3})\d+/, '$1')) : Number.NaN;
  if (!Number.isFinite(ms)) {
    throw new InvalidInputError(
      'Timestamp not in expected format. The server could not comply with the request since it is either malformed or otherwise incorrect. The client is assumed to be in error.',
      'ValidationTimeStampError',
    );
  }
  return ms;
}

/** `POST /v3/users/{user_id}/application_credentials` body → {@link AppCredentialInput}. */
export function appCredentialCreateInput(body: unknown): AppCredentialInput {
  const c = parseBody(AppCredentialCreateBody, body).application_credential;
  if (c.access_rules !== undefined && c.access_rules.length > 0) {
    throw new InvalidInputError(
      "Invalid input for field 'application_credential/access_rules': esi does not support access rules; leave them out (the credential then allows every API the roles allow).",
      'ValidationError',
    );
  }
  if (c.system !== undefined && c.system !== null) {
    throw new InvalidInputError(
      "Invalid input for field 'application_credential/system': esi does not support system-scoped application credentials.",
      'ValidationError',
    );
  }
  return {
    name: c.name,
    ...(c.description !== undefined ? { description: c.description } : {}),
    ...(c.secret !== undefined ? { secret: c.secret } : {}),
    ...(c.expires_at !== undefined && c.expires_at !== null ? { expiresAt: parseExpiry(c.expires_at) } : {}),
    ...(c.roles !== undefined ? { roles: c.roles } : {}),
    ...(c.unrestricted !== undefined ? { unrestricted: c.unrestricted } : {}),
  };
}

/** True when a `POST /v3/auth/tokens` body names the `application_credential` method. */
export function usesApplicationCredential(body: unknown): boolean {
  const methods = (body as { auth?: { identity?: { methods?: unknown } } } | null)?.auth?.identity?.methods;
  return Array.isArray(methods) && methods.includes('application_credential');
}

/**
 * A `POST /v3/auth/tokens` body with the `application_credential` method → {@link AppCredentialAuth}.
 * @throws InvalidInputError for a malformed body or another method besides it
 * @throws UnauthorizedError when a scope is asked for
 */
export function appCredentialAuthInput(body: unknown): AppCredentialAuth {
  const { identity, scope } = parseBody(AppCredentialAuthBody, body).auth;
  if (new Set(identity.methods).size > 1)
    throw new InvalidInputError(
      'esi accepts one authentication method per request (password, token or application_credential).',
      'ValidationError',
    );
  if (scope !== undefined) {
    throw new UnauthorizedError(
      'Error authenticating with application credential: Application credentials cannot request a scope.',
      'ApplicationCredentialAuthError',
    );
  }
  const c = identity.application_credential;
  if (!c) {
    throw new InvalidInputError(
      'Expecting to find application_credential in identity. The server could not comply with the request since it is either malformed or otherwise incorrect. The client is assumed to be in error.',
      'ValidationError',
    );
  }
  const u = c.user;
  return {
    secret: c.secret,
    ...(c.id !== undefined ? { id: c.id } : {}),
    ...(c.name !== undefined ? { name: c.name } : {}),
    ...(u
      ? {
          user: {
            ...(u.id !== undefined ? { userId: u.id } : {}),
            ...(u.name !== undefined ? { userName: u.name } : {}),
            ...(u.domain?.id !== undefined ? { domainId: u.domain.id } : {}),
            ...(u.domain?.name !== undefined ? { domainName: u.domain.name } : {}),
          },
        }
      : {}),
  };
}
