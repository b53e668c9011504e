/**
 * Enrol a node (`/dashboard/nodes/new`): name, driver, BMC address and credentials, resource
 * class and properties — then the BMC is checked the way Ironic allows, step by step, each
 * answer shown in the API's words beside the field it is about:
 *
 * 1. **Save** — `POST /baremetal/v1/nodes` (the node starts in `enroll`: it is recorded but not
 *    usable; the owner is the signed-in project). A refused body (bad name, unknown driver) is
 *    shown beside its field. Saving again after a fix sends `PATCH /baremetal/v1/nodes/{id}`.
 * 2. **Validate** — `GET /baremetal/v1/nodes/{id}/validate`: power and management say whether
 *    the BMC fields are complete and well-formed (no BMC contact); the other interfaces (boot,
 *    deploy…, which matter for deploys, not for enrolling) are folded below them.
 * 3. **Manage** — `PUT …/states/provision {target: manage}`: the conductor reaches the BMC with
 *    the credentials (`verifying`); `manageable` means it answered, back to `enroll` with
 *    `last_error` means it did not (unreachable, wrong credentials, wrong system), shown beside
 *    the address. The node can be fixed and checked again, or deleted
 *    (`DELETE /baremetal/v1/nodes/{id}`).
 *
 * The driver list comes from `GET /baremetal/v1/drivers`; where the policy keeps it for
 * operators (the default), the form offers the drivers whose BMC fields it knows and says so.
 * Enrolling itself is an operator's right by default (`baremetal:node:create`); a refusal is
 * shown in words.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent, type ReactNode } from 'react';
import { Link, useNavigate } from 'react-router';
import { ApiError, call, get } from '../../lib/api.ts';
import { isAdmin, useSession } from '../../lib/session.tsx';
import { Badge, ErrorNote, PageHeader } from '../../ui/common.tsx';
import { placeMessage } from './model.ts';
import { ProvisionActions, useNode } from './ProvisionActions.tsx';

/** The BMC fields of each driver the form knows, by role. */
const BMC_KEYS: Record<string, { address: string; system?: string; port?: string; username: string; password: string }> = {
  redfish: {
    address: 'redfish_address',
    system: 'redfish_system_id',
    username: 'redfish_username',
    password: 'redfish_password',
  },
  ipmi: { address: 'ipmi_address', port: 'ipmi_port', username: 'ipmi_username', password: 'ipmi_password' },
};

/** The interfaces whose validation is about the BMC fields. */
const BMC_INTERFACES = ['power', 'management'];

/** The drivers offered when the API does not list them to this user. */
const KNOWN_DRIVERS = ['redfish', 'ipmi'];

/** What the form holds. */
interface Fields {
  name: string;
  driver: string;
  address: string;
  system: string;
  port: string;
  username: string;
  password: string;
  resourceClass: string;
  properties: string;
  owner: string;
}

/** One interface's validation as Ironic answers it. */
type Validation = Record<string, { result: boolean | null; reason?: string }>;

/** A problem the form finds itself, before asking the API (shown beside its field). */
class FieldProblem extends Error {
  constructor(
    readonly field: keyof Fields,
    message: string,
  ) {
    super(message);
  }
}

/** Interfaces' validation results as a table. */
function ValidationTable({ rows, testId }: { rows: Array<[string, Validation[string]]>; testId: string }): ReactNode {
  return (
    <table className="grid compact" data-testid={testId}>
      <thead>
        <tr>
          <th scope="col">Interface</th>
          <th scope="col">Result</th>
          <th scope="col">Reason</th>
        </tr>
      </thead>
      <tbody>
        {rows.map(([kind, r]) => (
          <tr key={kind} data-interface={kind}>
            <th scope="row">{kind}</th>
            <td>
              <span className={`badge ${r.result === true ? 'good' : r.result === false ? 'bad' : 'plain'}`}>
                {r.result === true ? 'passed' : r.result === false ? 'failed' : 'not checked'}
              </span>
            </td>
            <td>{r.reason ?? ''}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** A labelled input with its error beside it (described by, marked invalid). */
function Field({
  id,
  label,
  error,
  hint,
  children,
}: {
  id: string;
  label: string;
  error: string | undefined;
  hint?: string;
  children: (props: { id: string; 'aria-invalid': boolean; 'aria-describedby': string | undefined }) => ReactNode;
}): ReactNode {
  const described = [error ? `${id}-error` : null, hint ? `${id}-hint` : null].filter(Boolean).join(' ') || undefined;
  return (
    <div className={`o-field${error ? ' invalid' : ''}`}>
      <label htmlFor={id}>{label}</label>
      {children({ id, 'aria-invalid': error !== undefined, 'aria-describedby': described })}
      {hint ? (
        <small className="muted" id={`${id}-hint`}>
          {hint}
        </small>
      ) : null}
      {error ? (
        <p className="error o-field-error" id={`${id}-error`} role="alert">
          {error}
        </p>
      ) : null}
    </div>
  );
}

/** The body's `driver_info` for the form's driver. */
function driverInfo(f: Fields): Record<string, unknown> {
  const keys = BMC_KEYS[f.driver];
  if (keys === undefined) return {};
  const info: Record<string, unknown> = {};
  if (f.address) info[keys.address] = f.address;
  if (keys.system && f.system) info[keys.system] = f.system;
  if (keys.port && f.port) info[keys.port] = /^\d+$/.test(f.port) ? Number(f.port) : f.port;
  if (f.username) info[keys.username] = f.username;
  if (f.password) info[keys.password] = f.password;
  return info;
}

/** The enrol page. */
export function Enrol(): ReactNode {
  const { session } = useSession();
  const admin = isAdmin(session);
  const qc = useQueryClient();
  const navigate = useNavigate();
  const [f, setF] = useState<Fields>({
    name: '',
    driver: 'redfish',
    address: '',
    system: '',
    port: '',
    username: '',
    password: '',
    resourceClass: 'baremetal',
    properties: '{}',
    owner: session?.project?.id ?? '',
  });
  const [saved, setSaved] = useState<string | null>(null);
  const [validation, setValidation] = useState<Validation | null>(null);
  const [formError, setFormError] = useState<unknown>(null);
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});

  const drivers = useQuery({
    queryKey: ['drivers'],
    queryFn: async ({ signal }) =>
      (await get<{ drivers: Array<{ name: string }> }>('/baremetal/v1/drivers', signal)).drivers.map((d) => d.name),
    retry: false,
  });
  const driverNames = drivers.data ?? KNOWN_DRIVERS;
  const keys = BMC_KEYS[f.driver];
  const node = useNode(saved ?? '');
  const live = saved !== null ? node.data : undefined;

  /** The form field (by its API name) each message part belongs to. */
  const apiNames: Record<string, string> = {
    name: 'name',
    driver: 'driver',
    resource_class: 'resourceClass',
    properties: 'properties',
    owner: 'owner',
    ...(keys ? { [keys.address]: 'address', [keys.username]: 'username', [keys.password]: 'password' } : {}),
    ...(keys?.system ? { [keys.system]: 'system' } : {}),
    ...(keys?.port ? { [keys.port]: 'port' } : {}),
  };
  const place = (message: string): Record<string, string> => {
    const { byField } = placeMessage(message, Object.keys(apiNames));
    return Object.fromEntries(Object.entries(byField).map(([k, v]) => [apiNames[k]!, v]));
  };

  const save = useMutation({
    mutationFn: async () => {
      let properties: unknown;
      try {
        properties = JSON.parse(f.properties || '{}');
      } catch {
        throw new FieldProblem('properties', 'Properties must be JSON, e.g. {"cpus": 8, "memory_mb": 32768}.');
      }
      if (properties === null || typeof properties !== 'object' || Array.isArray(properties))
        throw new FieldProblem('properties', 'Properties must be a JSON object.');
      let uuid = saved;
      if (uuid === null) {
        const body: Record<string, unknown> = {
          driver: f.driver,
          driver_info: driverInfo(f),
          resource_class: f.resourceClass || null,
          properties,
        };
        if (f.name) body.name = f.name;
        if (f.owner) body.owner = f.owner;
        uuid = (await call<{ uuid: string }>('POST', '/baremetal/v1/nodes', { body })).body.uuid;
        setSaved(uuid);
      } else {
        await call('PATCH', `/baremetal/v1/nodes/${uuid}`, {
          body: [
            { op: 'replace', path: '/name', value: f.name || null },
            { op: 'replace', path: '/resource_class', value: f.resourceClass || null },
            { op: 'replace', path: '/properties', value: properties },
            { op: 'replace', path: '/driver_info', value: driverInfo(f) },
          ],
        });
      }
      const v = (await call<Validation>('GET', `/baremetal/v1/nodes/${uuid}/validate`)).body;
      return { uuid, v };
    },
    onMutate: () => {
      setFormError(null);
      setFieldErrors({});
    },
    onSuccess: async ({ uuid, v }) => {
      setValidation(v);
      const errors: Record<string, string> = {};
      let unplaced: string | null = null;
      for (const kind of ['power', 'management']) {
        const r = v[kind];
        if (r && r.result === false && r.reason) {
          const placed = place(r.reason);
          if (Object.keys(placed).length === 0) unplaced = r.reason;
          Object.assign(errors, placed);
        }
      }
      setFieldErrors(errors);
      if (unplaced) setFormError(unplaced);
      await qc.invalidateQueries({ queryKey: ['node', uuid] });
      await qc.invalidateQueries({ queryKey: ['nodes'] });
    },
    onError: (e) => {
      if (e instanceof FieldProblem) setFieldErrors({ [e.field]: e.message });
      else if (e instanceof ApiError && e.status === 400) {
        const placed = place(e.message);
        setFieldErrors(placed);
        if (Object.keys(placed).length === 0) setFormError(e);
      } else if (e instanceof ApiError && e.status === 403) {
        setFormError(
          `${e.message} — your project may not enrol nodes here (policy baremetal:node:create; by default only operators may): ask an operator to enrol the node for your project.`,
        );
      } else setFormError(e);
    },
  });

  const remove = useMutation({
    mutationFn: async () => call('DELETE', `/baremetal/v1/nodes/${saved}`),
    onSuccess: async () => {
      await qc.invalidateQueries({ queryKey: ['nodes'] });
      void navigate('/dashboard/nodes');
    },
  });

  const set =
    (k: keyof Fields) =>
    (e: { target: { value: string } }): void =>
      setF((old) => ({ ...old, [k]: e.target.value }));

  // The BMC's answer to manage: back in enroll with last_error means it did not answer.
  const bmcProblem = live && live.provision_state === 'enroll' && live.target_provision_state === null ? live.last_error : null;
  const errors = bmcProblem && !fieldErrors.address ? { ...fieldErrors, address: bmcProblem } : fieldErrors;
  const others = Object.entries(validation ?? {})
    .filter(([k]) => !BMC_INTERFACES.includes(k))
    .sort(([a], [b]) => a.localeCompare(b));
  const validOk = validation !== null && validation.power?.result !== false && validation.management?.result !== false;

  return (
    <main>
      <PageHeader title="Enrol a node" />
      <p className="muted o-lede">
        A node is saved in <Badge value="enroll" /> first. esi then checks that its BMC fields are complete (validate), and
        <strong> Manage</strong> reaches the BMC with them: the node becomes <Badge value="manageable" /> only if the BMC answers.
      </p>
      <div className="o-enrol-layout">
        <form
          className="o-enrol"
          noValidate
          aria-describedby={formError ? 'enrol-error' : undefined}
          onSubmit={(e: FormEvent) => {
            e.preventDefault();
            save.mutate();
          }}
        >
          <fieldset>
            <legend>Node</legend>
            <Field id="enrol-name" label="Name" error={errors.name} hint="Letters, digits and - . _ ~ (optional)">
              {(p) => <input {...p} value={f.name} onChange={set('name')} autoComplete="off" />}
            </Field>
            <Field
              id="enrol-driver"
              label="Driver"
              error={errors.driver}
              hint={
                drivers.error
                  ? 'The driver list is for operators here; these are the drivers this form knows.'
                  : 'The hardware type that speaks to the BMC.'
              }
            >
              {(p) => (
                <select {...p} value={f.driver} onChange={set('driver')} disabled={saved !== null}>
                  {driverNames.map((d) => (
                    <option key={d} value={d}>
                      {d}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            {admin ? (
              <Field
                id="enrol-owner"
                label="Owner project (ID)"
                error={errors.owner}
                hint="The project that owns the node; empty for none."
              >
                {(p) => <input {...p} className="mono" value={f.owner} onChange={set('owner')} disabled={saved !== null} />}
              </Field>
            ) : (
              <p className="muted">
                Owner: <strong>{session?.project?.name ?? '—'}</strong> (your project)
              </p>
            )}
          </fieldset>
          {keys ? (
            <fieldset>
              <legend>BMC ({f.driver})</legend>
              <Field
                id="enrol-address"
                label="BMC address"
                error={errors.address}
                hint={f.driver === 'redfish' ? 'https://bmc.example.com (https:// when no scheme is given)' : 'Host name or IP address'}
              >
                {(p) => <input {...p} value={f.address} onChange={set('address')} autoComplete="off" inputMode="url" />}
              </Field>
              {keys.system ? (
                <Field
                  id="enrol-system"
                  label="System ID"
                  error={errors.system}
                  hint="/redfish/v1/Systems/1 — optional when the BMC manages one system"
                >
                  {(p) => <input {...p} value={f.system} onChange={set('system')} autoComplete="off" />}
                </Field>
              ) : null}
              {keys.port ? (
                <Field id="enrol-port" label="Port" error={errors.port} hint="623 when empty">
                  {(p) => <input {...p} value={f.port} onChange={set('port')} inputMode="numeric" autoComplete="off" />}
                </Field>
              ) : null}
              <Field id="enrol-username" label="Username" error={errors.username}>
                {(p) => <input {...p} value={f.username} onChange={set('username')} autoComplete="off" />}
              </Field>
              <Field id="enrol-password" label="Password" error={errors.password} hint="Stored encrypted; never shown again.">
                {(p) => <input {...p} type="password" value={f.password} onChange={set('password')} autoComplete="new-password" />}
              </Field>
            </fieldset>
          ) : null}
          <fieldset>
            <legend>Hardware</legend>
            <Field
              id="enrol-class"
              label="Resource class"
              error={errors.resourceClass}
              hint="What lessees filter offers by, e.g. baremetal, gpu"
            >
              {(p) => <input {...p} value={f.resourceClass} onChange={set('resourceClass')} />}
            </Field>
            <Field
              id="enrol-properties"
              label="Properties (JSON)"
              error={errors.properties}
              hint='e.g. {"cpus": 8, "memory_mb": 32768, "local_gb": 100}; Inspect fills them from the hardware.'
            >
              {(p) => <textarea {...p} className="mono" rows={3} value={f.properties} onChange={set('properties')} />}
            </Field>
          </fieldset>
          <ErrorNote error={formError} id="enrol-error" />
          <div className="actions">
            <button type="submit" disabled={save.isPending}>
              {save.isPending ? 'Saving…' : saved === null ? 'Save and validate' : 'Save changes and validate'}
            </button>
            {saved !== null ? (
              <button type="button" className="danger" onClick={() => remove.mutate()} disabled={remove.isPending}>
                Delete this node
              </button>
            ) : null}
          </div>
          <ErrorNote error={remove.error} />
        </form>
        <div className="o-enrol-side">
          {saved === null ? <p className="muted">Validation and the BMC check show here once the node is saved.</p> : null}
          {saved !== null && validation !== null ? (
            <section aria-label="Validation" className="o-validation">
              <h2>Validation</h2>
              <ValidationTable
                rows={Object.entries(validation)
                  .filter(([k]) => BMC_INTERFACES.includes(k))
                  .sort(([a], [b]) => BMC_INTERFACES.indexOf(a) - BMC_INTERFACES.indexOf(b))}
                testId="validation"
              />
              <p className="muted">
                {validOk
                  ? 'Power and management pass: the BMC fields are complete. Manage now checks that the BMC answers.'
                  : 'Power or management fail: fix the fields marked in the form and save again, or delete the node.'}
              </p>
              <details>
                <summary>
                  Other interfaces ({others.filter(([, r]) => r.result === false).length} of {others.length} not ready: they matter for
                  deploys, not for enrolling)
                </summary>
                <ValidationTable rows={others} testId="validation-others" />
              </details>
            </section>
          ) : null}

          {saved !== null ? (
            <>
              <ProvisionActions id={saved} />
              {live?.provision_state === 'manageable' ? (
                <p className="notice" role="status">
                  The BMC answered (power: {live.power_state ?? 'unknown'}). The node is manageable:{' '}
                  <Link to={`/dashboard/nodes/${saved}`}>open its page</Link> or <Link to="/dashboard/offers/mine">offer it</Link>.
                </p>
              ) : null}
            </>
          ) : null}
        </div>
      </div>
    </main>
  );
}
