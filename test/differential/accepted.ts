/**
 * The differences between esi and Ironic 21.4 that the differential test accepts, each with its
 * reason; every other difference fails the test. Mirrored, id by id, in docs/compatibility.md
 * ("Differences from Ironic 21.4 found by the differential tests"; a test checks the mirror).
 *
 * Kinds:
 * - `pending`: an Ironic resource esi does not serve yet ("not implemented yet"); being added
 *   (issue 18). The run says when such an entry no longer matches anything, so that it is removed.
 * - `esi-gap`: esi is wrong and the fix is known, but lies outside this test's change (another
 *   module, or an existing test pins esi's current answer); the reason names where.
 * - `deliberate`: esi answers otherwise on purpose; the reason says why.
 * - `ironic-bug`: Ironic's own behaviour is a bug (a 500 for bad input, …); esi deliberately
 *   does not copy it.
 * - `environment`: the two set-ups differ, not the APIs: Ironic's fake drivers and noop network
 *   interface against esi's simulated hardware and real networking.
 *
 * An entry matches a difference when every pattern it has matches (step id, `where`, and
 * Ironic's and esi's side, see compare.ts).
 */
import type { Difference } from './compare.ts';

/** Why a difference is accepted. */
export type AcceptedKind = 'pending' | 'esi-gap' | 'deliberate' | 'ironic-bug' | 'environment';

/** One accepted difference. */
export interface AcceptedDifference {
  /** Stable slug, also the entry's name in docs/compatibility.md. */
  readonly id: string;
  readonly kind: AcceptedKind;
  readonly reason: string;
  /** Matches `Difference.step` (`<sequence>: <METHOD> <path> @<version> (<note>)`). */
  readonly step?: RegExp;
  /** Matches `Difference.where` (`status`, `error format`, `body.links[].href`, …). */
  readonly where?: RegExp;
  /** Matches Ironic's side of the difference. */
  readonly ironic?: RegExp;
  /** Matches esi's side of the difference. */
  readonly esi?: RegExp;
}

/** An endpoint esi does not serve yet, compared so that the harness says when it lands (none left now). */
export const pending = (id: string, step: RegExp, what: string): AcceptedDifference => ({
  id,
  kind: 'pending',
  step,
  reason: `not implemented yet: ${what} (issue 18; being added)`,
});

/** The accepted differences, most specific first (a difference counts for the first entry it matches). */
export const ACCEPTED: readonly AcceptedDifference[] = [
  {
    id: 'webob-error-format',
    kind: 'deliberate',
    where: /^error format$/,
    reason:
      "errors Ironic raises outside its API layer (version negotiation, unknown routes and methods, sub-resources before their version, malformed identifiers in the path) carry webob's {code,title,description} and no version headers; esi sends the version headers with every error (clients negotiate from them), and answers in the API format {faultcode,faultstring,debuginfo} where it does not use webob's shape yet (python-ironicclient reads both)",
  },
  {
    id: 'ironic-500-on-bad-input',
    kind: 'ironic-bug',
    where: /^(status|body\.error_message\.faultcode)$/,
    ironic: /^(500|"Server")$/,
    esi: /^(400|"Client")$/,
    reason:
      'Ironic answers 500 to malformed JSON, an unknown field in fields= and a JSON-patch replace without value; esi answers 400, a client error',
  },
  {
    id: 'chassis-nodes-links',
    kind: 'ironic-bug',
    step: /^chassis: /,
    where: /^body\.(chassis\[\]\.)?nodes(\[\]| length)$/,
    reason:
      "Ironic 21.4 nests a chassis's nodes links in a second list ([[{self}, {bookmark}]]); esi gives the flat list of links every other resource has ([{self}, {bookmark}])",
  },
  {
    id: 'traits-before-1.37',
    kind: 'ironic-bug',
    step: /\/traits @1\.36/,
    where: /^status$/,
    reason:
      "before 1.37 Ironic's routing falls through to the node resource (GET 406, PUT 405, DELETE 404); esi answers 404, as for every sub-resource before its version",
  },
  {
    id: 'patch-shows-lock',
    kind: 'ironic-bug',
    step: /PATCH \/v1\/nodes\//,
    where: /^body\.reservation$/,
    reason: "Ironic's PATCH response shows the node still reserved by the conductor that saved it; esi shows the node as stored (no lock)",
  },
  {
    id: 'next-link-parameters',
    kind: 'deliberate',
    where: /^body\.next$/,
    reason:
      "Ironic's next link spells out every defaulted parameter (sort_key=id&sort_dir=asc&fields=<defaults>); esi's carries only those of the request, plus limit and marker: the same page",
  },
  {
    id: 'describedby-link',
    kind: 'ironic-bug',
    where: /^body\.links\[\]\.href$/,
    ironic: /docs\.openstack\.org\/\/ironic/,
    reason:
      'Ironic\u2019s describedby link has doubled slashes (https://docs.openstack.org//ironic/latest/contributor//webapi.html); esi links the same page without them',
  },
  {
    id: 'history-detail-route',
    kind: 'deliberate',
    step: /\/history\/detail @/,
    reason:
      "esi serves GET /v1/nodes/{node}/history/detail (the detailed list), which python-ironicclient's `history list --long` asks for; Ironic 21.4 has no such route and answers 404, so the client's --long fails there",
  },
  {
    id: 'heartbeat-token-first',
    kind: 'deliberate',
    step: /\/v1\/heartbeat\/\{absent\} @1\.82 \(no agent token\)/,
    reason:
      'a heartbeat without an agent token is refused (400) before the node is looked up, so an unauthenticated caller learns nothing about which nodes exist; Ironic looks the node up first (404)',
  },
  {
    id: 'history-records-more',
    kind: 'deliberate',
    step: /\/history/,
    where: /^body\.history length$/,
    reason: "esi's node history also records maintenance and other state changes (INFO); Ironic 21.4 records only errors",
  },
  {
    id: 'fake-power-state',
    kind: 'environment',
    step: /^(node-states|allocations): GET \/v1\/nodes\/\{node\} /,
    where: /^body\.power_state$/,
    reason:
      "Ironic's fake power interface echoes the recorded state (null until set) and its fake deploy leaves the node off; esi's fake hardware has a power state of its own (off when enrolled) and its deploy powers the node on, as a real deploy does",
  },
  {
    id: 'fake-boot-devices',
    kind: 'environment',
    step: /management\/boot_device/,
    where: /^body\.(supported_boot_devices length|persistent)$/,
    reason:
      "Ironic's fake management supports only pxe and always reports persistent false; esi's fake hardware offers pxe, disk, cdrom and bios and remembers persistence, as a BMC does",
  },
  {
    id: 'fake-network-interfaces',
    kind: 'environment',
    step: /^drivers: /,
    where: /enabled_network_interfaces length$/,
    reason: 'the Ironic peer enables only the noop network interface; esi enables noop and flat',
  },
  {
    id: 'noop-vifs',
    kind: 'environment',
    step: /\/vifs/,
    where: /^status$/,
    ironic: /^204$/,
    esi: /^400$/,
    reason:
      'the Ironic peer runs the noop network interface, which attaches and detaches any VIF id unchecked; esi is its own Neutron and refuses a VIF that is not one of its ports (every object a request names is resolved, docs/networking.md)',
  },
];

/** The first accepted entry that matches a difference, or undefined. */
export function acceptedFor(d: Difference, entries: readonly AcceptedDifference[] = ACCEPTED): AcceptedDifference | undefined {
  return entries.find(
    (e) =>
      (e.step === undefined || e.step.test(d.step)) &&
      (e.where === undefined || e.where.test(d.where)) &&
      (e.ironic === undefined || e.ironic.test(d.ironic)) &&
      (e.esi === undefined || e.esi.test(d.esi)),
  );
}
