/**
 * Request-body schemas of the identity API (TypeBox), after Keystone's JSON schemas
 * (keystone/resource/schema.py, keystone/identity/schema.py, keystone/assignment/schema.py,
 * keystone/auth/schema.py) and `keystone/common/validation/parameter_types.py`.
 *
 * As in Keystone, the top level of a body admits only its one wrapper key (`project`, `user`,
 * `role`, `auth`); an unknown top-level key is a 400. Project and user objects admit extra
 * attributes (stored and shown back, e.g. `email`), as Keystone's `additionalProperties: true`.
 * Roles do not (esi stores no extra role attributes; Keystone would keep them).
 */
import { Type } from '@sinclair/typebox';
import { Nullable } from './validation.ts';

/** Keystone `id_string`: 1–64 characters of letters, digits and dashes. */
export const IdString = Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-zA-Z0-9-]+$' });
/** A project name: 1–64 characters, not only blanks (Keystone `_project_name`). */
export const ProjectName = Type.String({ minLength: 1, maxLength: 64, pattern: '\\S' });
/** A user or role name: 1–255 characters, not only blanks. */
export const LongName = Type.String({ minLength: 1, maxLength: 255, pattern: '\\S' });
/** Keystone project tags: up to 80 strings of 1–255 characters without `/` or `,`. */
export const Tags = Type.Array(Type.String({ minLength: 1, maxLength: 255, pattern: '^[^,/]+$' }), { maxItems: 80 });
/** Resource options esi understands: only `immutable`, and only `false` (see inputs.ts). */
export const Options = Type.Object({ immutable: Type.Optional(Nullable(Type.Boolean())) }, { additionalProperties: false });
/** Passwords: any string up to 4096 characters (Keystone `max_password_length`). */
export const Password = Type.String({ maxLength: 4096 });

const projectFields = {
  name: ProjectName,
  description: Type.Optional(Nullable(Type.String({ maxLength: 65_535 }))),
  domain_id: Type.Optional(Nullable(IdString)),
  parent_id: Type.Optional(Nullable(IdString)),
  enabled: Type.Optional(Type.Boolean()),
  is_domain: Type.Optional(Type.Boolean()),
  tags: Type.Optional(Tags),
  options: Type.Optional(Options),
};

/** `POST /v3/projects`. */
export const ProjectCreateBody = Type.Object(
  { project: Type.Object(projectFields, { additionalProperties: true }) },
  { additionalProperties: false },
);

/** `PATCH /v3/projects/{id}`: any project field, at least one. */
export const ProjectUpdateBody = Type.Object(
  { project: Type.Partial(Type.Object(projectFields), { additionalProperties: true, minProperties: 1 }) },
  { additionalProperties: false },
);

const userFields = {
  name: LongName,
  password: Type.Optional(Nullable(Password)),
  default_project_id: Type.Optional(Nullable(IdString)),
  description: Type.Optional(Nullable(Type.String({ maxLength: 65_535 }))),
  domain_id: Type.Optional(IdString),
  enabled: Type.Optional(Type.Boolean()),
  options: Type.Optional(Type.Object({}, { additionalProperties: false })),
};

/** `POST /v3/users`. */
export const UserCreateBody = Type.Object(
  { user: Type.Object(userFields, { additionalProperties: true }) },
  { additionalProperties: false },
);

/** `PATCH /v3/users/{id}`. */
export const UserUpdateBody = Type.Object(
  { user: Type.Partial(Type.Object(userFields), { additionalProperties: true, minProperties: 1 }) },
  { additionalProperties: false },
);

/**
 * `POST /v3/users/{id}/password` (keystone/identity/schema.py `password_change`): both
 * passwords required, nothing else.
 */
export const PasswordChangeBody = Type.Object(
  { user: Type.Object({ original_password: Password, password: Password }, { additionalProperties: false }) },
  { additionalProperties: false },
);

/** `POST /v3/roles`. Only global roles (`domain_id` null). */
export const RoleCreateBody = Type.Object(
  {
    role: Type.Object(
      {
        name: LongName,
        description: Type.Optional(Nullable(Type.String({ maxLength: 65_535 }))),
        domain_id: Type.Optional(Type.Null()),
        options: Type.Optional(Options),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

const DomainRef = Type.Object({ id: Type.Optional(IdString), name: Type.Optional(LongName) });

/** `POST /v3/auth/tokens` (keystone/auth/schema.py `token_issue`, subset). */
export const AuthBody = Type.Object(
  {
    auth: Type.Object({
      identity: Type.Object({
        methods: Type.Array(Type.String(), { minItems: 1 }),
        password: Type.Optional(
          Type.Object({
            user: Type.Object({
              id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
              name: Type.Optional(LongName),
              password: Password,
              domain: Type.Optional(DomainRef),
            }),
          }),
        ),
        token: Type.Optional(Type.Object({ id: Type.String({ minLength: 1, maxLength: 512 }) })),
      }),
      scope: Type.Optional(
        Type.Union([
          Type.Literal('unscoped'),
          Type.Object(
            {
              project: Type.Optional(
                Type.Object({
                  id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
                  name: Type.Optional(ProjectName),
                  domain: Type.Optional(DomainRef),
                }),
              ),
              domain: Type.Optional(DomainRef),
              system: Type.Optional(Type.Object({ all: Type.Optional(Type.Boolean()) })),
              'OS-TRUST:trust': Type.Optional(Type.Object({})),
            },
            { maxProperties: 1 },
          ),
        ]),
      ),
    }),
  },
  { additionalProperties: false },
);
