/**
 * TokenService over a real (in-memory SQLite) identity store with a ManualClock: issue,
 * validation, scope checks, expiry, revocation, rescoping.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UnauthorizedError, NotFoundError, InvalidInputError } from '../../../src/domain/errors.ts';
import { bootstrapIdentity, SubjectTokens, TokenService, tokenId } from '../../../src/domain/identity/index.ts';
import { DEFAULT_RULES, PolicyEngine } from '../../../src/domain/policy/index.ts';
import { hashPassword } from '../../../src/domain/identity/passwords.ts';
import { openStore, type Store } from '../../../src/store/database.ts';
import { KyselyIdentityRepository } from '../../../src/store/identity/repository.ts';
import { ManualClock } from '../../helpers/harness.ts';

const clock = new ManualClock(Date.UTC(2030, 5, 1, 12));
let store: Store;
let repo: KyselyIdentityRepository;
let tokens: TokenService;
let projectId: string;
let userId: string;

beforeAll(async () => {
  store = await openStore({ sqlitePath: ':memory:' });
  repo = new KyselyIdentityRepository(store.db);
  const boot = await bootstrapIdentity(repo, clock, 'adminpw');
  tokens = new TokenService(repo, clock, 600);
  projectId = boot.adminProjectId;
  userId = 'u1u1u1u1u1u1u1u1u1u1u1u1u1u1u1u1';
  await repo.createUser(
    { id: userId, name: 'alice', domain_id: 'default', default_project_id: null, enabled: true, extra: {} },
    await hashPassword('alice-pw'),
    clock.now(),
  );
  const [member] = await repo.findRoles({ name: 'member' });
  await repo.grant({ user_id: userId, role_id: member!.id, target: { type: 'project', id: projectId } });
});
afterAll(async () => store?.close());

describe('TokenService', () => {
  it('issues project tokens with implied roles and the configured lifetime', async () => {
    const t = await tokens.authenticatePassword(
      { userName: 'alice', domainName: 'Default', password: 'alice-pw' },
      { kind: 'project', projectName: 'admin', domainId: 'default' },
    );
    expect(t.record.project_id).toBe(projectId);
    expect(t.record.roles.map((r) => r.name).sort()).toEqual(['member', 'reader']);
    expect(t.record.issued_at).toBe(clock.now());
    expect(t.record.expires_at).toBe(clock.now() + 600_000);
    expect(t.record.id).toBe(tokenId(t.secret));
    const info = await tokens.validate(t.secret);
    expect(info.context).toMatchObject({ userId, projectId, roles: ['member', 'reader'], systemScope: null, anonymous: false });
  });

  it('refuses wrong passwords, scopes without roles and malformed requests', async () => {
    await expect(tokens.authenticatePassword({ userId, password: 'nope' }, { kind: 'unscoped' })).rejects.toBeInstanceOf(UnauthorizedError);
    await expect(tokens.authenticatePassword({ userId, password: 'alice-pw' }, { kind: 'system' })).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
    await expect(tokens.authenticatePassword({ userName: 'alice', password: 'alice-pw' }, { kind: 'unscoped' })).rejects.toBeInstanceOf(
      InvalidInputError,
    );
    await expect(tokens.authenticatePassword({ password: 'alice-pw' }, { kind: 'unscoped' })).rejects.toBeInstanceOf(InvalidInputError);
  });

  it('tokens expire exactly at expires_at', async () => {
    const t = await tokens.authenticatePassword({ userId, password: 'alice-pw' }, { kind: 'project', projectId });
    clock.advance(599_999);
    await expect(tokens.validate(t.secret)).resolves.toBeDefined();
    clock.advance(1);
    await expect(tokens.validate(t.secret)).rejects.toBeInstanceOf(UnauthorizedError);
    const own = (
      await tokens.validate((await tokens.authenticatePassword({ userId, password: 'alice-pw' }, { kind: 'project', projectId })).secret)
    ).context;
    await expect(new SubjectTokens(tokens, new PolicyEngine(DEFAULT_RULES)).resolve(own, t.secret, 'validate')).rejects.toBeInstanceOf(
      NotFoundError,
    );
  });

  it('revocation is immediate, even for a cached token', async () => {
    const t = await tokens.authenticatePassword({ userId, password: 'alice-pw' }, { kind: 'project', projectId });
    await tokens.validate(t.secret);
    await tokens.revoke(t.secret);
    await expect(tokens.validate(t.secret)).rejects.toBeInstanceOf(UnauthorizedError);
  });

  it('a validation that read the token before a revocation wrote does not cache it: the next validation refuses it', async () => {
    const t = await tokens.authenticatePassword({ userId, password: 'alice-pw' }, { kind: 'project', projectId });
    // The validation's read of the token row is held until the revocation has written.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const slow = Object.create(repo) as KyselyIdentityRepository;
    slow.getToken = async (id: string) => {
      const record = await repo.getToken(id);
      await held;
      return record;
    };
    const racing = new TokenService(slow, clock, 600);
    const inFlight = racing.validate(t.secret);
    await racing.revoke(t.secret);
    release();
    await inFlight; // it read the token before the revocation: it may answer with it once
    await expect(racing.validate(t.secret)).rejects.toBeInstanceOf(UnauthorizedError);
  });

  it('revokeFor(user, project) revokes only that scope', async () => {
    const scoped = await tokens.authenticatePassword({ userId, password: 'alice-pw' }, { kind: 'project', projectId });
    const unscoped = await tokens.authenticatePassword({ userId, password: 'alice-pw' }, { kind: 'unscoped' });
    await tokens.validate(scoped.secret);
    await tokens.revokeFor({ userId, projectId });
    await expect(tokens.validate(scoped.secret)).rejects.toBeInstanceOf(UnauthorizedError);
    await expect(tokens.validate(unscoped.secret)).resolves.toBeDefined();
  });

  it('rescoping with a token never outlives the original', async () => {
    const unscoped = await tokens.authenticatePassword({ userId, password: 'alice-pw' }, { kind: 'unscoped' });
    clock.advance(300_000);
    const rescoped = await tokens.authenticateToken(unscoped.secret, { kind: 'project', projectId });
    expect(rescoped.record.expires_at).toBe(unscoped.record.expires_at);
    expect([...rescoped.record.methods].sort()).toEqual(['password', 'token']);
  });

  it('no scope requested: the default project when the user holds a role there, else unscoped', async () => {
    const bob = 'b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0';
    await repo.createUser(
      { id: bob, name: 'bob', domain_id: 'default', default_project_id: projectId, enabled: true, extra: {} },
      await hashPassword('bob-pw'),
      clock.now(),
    );
    expect((await tokens.authenticatePassword({ userId: bob, password: 'bob-pw' }, { kind: 'default' })).record.project_id).toBeNull();
    const [reader] = await repo.findRoles({ name: 'reader' });
    await repo.grant({ user_id: bob, role_id: reader!.id, target: { type: 'project', id: projectId } });
    const scoped = await tokens.authenticatePassword({ userId: bob, password: 'bob-pw' }, { kind: 'default' });
    expect(scoped.record.project_id).toBe(projectId);
    expect(scoped.record.roles.map((r) => r.name)).toEqual(['reader']);
    expect((await tokens.authenticatePassword({ userId: bob, password: 'bob-pw' }, { kind: 'unscoped' })).record.project_id).toBeNull();
    expect((await tokens.authenticatePassword({ userId, password: 'alice-pw' }, { kind: 'default' })).record.project_id).toBeNull();
  });

  it('rejects absurdly long or empty secrets without a lookup', async () => {
    await expect(tokens.validate('')).rejects.toBeInstanceOf(UnauthorizedError);
    await expect(tokens.validate('a'.repeat(513))).rejects.toBeInstanceOf(UnauthorizedError);
  });
});
