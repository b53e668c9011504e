/**
 * A bounded cache of rendered node JSON (UTF-8 encoded), so that large detail lists
 * (`GET /v1/nodes?detail=True`) re-render and re-encode only the nodes that changed.
 *
 * A rendering depends on the node row (its `version` changes on every write, conductor
 * reservations included), the microversion, the caller's redaction mask and the node's
 * serving conductor; the key holds all four plus the UUID, so an entry can never be stale —
 * a changed node simply misses. Eviction is by recency in two generations (O(1), no scan): new
 * and reused entries go to the young generation; when it holds half the budget (bytes of JSON)
 * it becomes the old one, and the previous old generation — entries not used for a whole
 * generation — is dropped. Entries are Buffers rather than strings: their bytes live
 * outside the JS heap, so keeping thousands of renderings costs the garbage collector nothing,
 * and a page is assembled by copying bytes, not by encoding text again.
 *
 * Whole pages are cached too, as encoded bytes, keyed by a digest of their node keys and
 * `next` link: an unchanged page is answered without assembling 2.8 MB again. The cache also
 * remembers how much of the last full page had to be rendered ({@link NodeRenderCache.expectsMisses}),
 * a hint for how to read the next one (`NodeListRequest.expectMisses`).
 */
import { createHash } from 'node:crypto';
import type { NodeView } from '../../domain/inventory/presentation.ts';

/**
 * Default budget: 16 MiB of JSON (≈ 5,700 full nodes). It counts in the server's resident memory
 * (issue 22: under 250 MB at 10,000 nodes); 48 MiB held every node of a 10,000-node cloud.
 */
export const DEFAULT_CACHE_BYTES = 16 * 1024 * 1024;
/** Default budget of whole encoded list pages: 8 MiB (≈ 3 pages of 1,000 full nodes; was 32 MiB). */
export const DEFAULT_PAGE_BYTES = 8 * 1024 * 1024;

/** Recency-bounded cache of full-node JSON renderings (UTF-8) and of whole encoded list pages. */
export class NodeRenderCache {
  #young = new Map<string, Buffer>();
  #youngBytes = 0;
  #old = new Map<string, Buffer>();
  #oldBytes = 0;
  readonly #pages = new Map<string, Buffer>();
  #pageBytes = 0;
  /** Share of the nodes of the last full page served that had to be rendered (0…1). */
  #lastMissShare = 0;

  /**
   * @param budget largest total size of node renderings kept, in bytes
   * @param pageBudget largest total size of cached pages, in bytes
   */
  constructor(
    private readonly budget = DEFAULT_CACHE_BYTES,
    private readonly pageBudget = DEFAULT_PAGE_BYTES,
  ) {}

  /** The key of a whole page: a digest of its node keys and its `next` link. */
  static pageKey(nodeKeys: readonly string[], next: string | undefined): string {
    return createHash('sha256')
      .update(nodeKeys.join('\n'))
      .update('\u0000')
      .update(next ?? '')
      .digest('base64');
  }

  /** A cached encoded page, marking it recently used; undefined on a miss. */
  getPage(key: string): Buffer | undefined {
    const v = this.#pages.get(key);
    if (v !== undefined) {
      this.#pages.delete(key);
      this.#pages.set(key, v);
    }
    return v;
  }

  /** Store an encoded page, evicting the least recently used pages beyond the page budget. */
  setPage(key: string, body: Buffer): void {
    if (body.length > this.pageBudget || this.#pages.has(key)) return;
    this.#pages.set(key, body);
    this.#pageBytes += body.length;
    for (const [k, v] of this.#pages) {
      if (this.#pageBytes <= this.pageBudget) break;
      this.#pages.delete(k);
      this.#pageBytes -= v.length;
    }
  }

  /** Record how many of a page's nodes had to be rendered (0 for a page served whole from cache). */
  notePage(nodes: number, rendered: number): void {
    this.#lastMissShare = nodes === 0 ? 0 : rendered / nodes;
  }

  /** True when most nodes of the last full page served had to be rendered: the next page likely needs most rendered too. */
  expectsMisses(): boolean {
    return this.#lastMissShare > 0.5;
  }

  /** The cache key of a view rendered at a microversion. */
  static key(view: NodeView, version: number): string {
    return `${view.node.uuid}|${view.node.version}|${version}|${view.redaction}|${view.conductor ?? ''}`;
  }

  /** True when the key is cached (without touching its recency). */
  has(key: string): boolean {
    return this.#young.has(key) || this.#old.has(key);
  }

  /** The cached rendering, marking it recently used; undefined on a miss. */
  get(key: string): Buffer | undefined {
    const young = this.#young.get(key);
    if (young !== undefined) return young;
    const old = this.#old.get(key);
    if (old !== undefined) {
      this.#old.delete(key);
      this.#oldBytes -= old.length;
      this.#add(key, old);
    }
    return old;
  }

  /** Store a rendering (UTF-8 JSON); entries unused for a generation are dropped (see the module documentation). */
  set(key: string, json: Buffer): void {
    if (json.length > this.budget) return;
    const young = this.#young.get(key);
    if (young !== undefined) {
      this.#young.delete(key);
      this.#youngBytes -= young.length;
    }
    const old = this.#old.get(key);
    if (old !== undefined) {
      this.#old.delete(key);
      this.#oldBytes -= old.length;
    }
    this.#add(key, json);
  }

  /** Put an entry into the young generation, turning generations over when it is full. */
  #add(key: string, json: Buffer): void {
    this.#young.set(key, json);
    this.#youngBytes += json.length;
    if (this.#youngBytes > this.budget / 2) {
      this.#old = this.#young;
      this.#oldBytes = this.#youngBytes;
      this.#young = new Map();
      this.#youngBytes = 0;
    }
  }

  /** Number of entries and total sizes in bytes (for tests and metrics). */
  stats(): { entries: number; bytes: number; pages: number; pageBytes: number } {
    return {
      entries: this.#young.size + this.#old.size,
      bytes: this.#youngBytes + this.#oldBytes,
      pages: this.#pages.size,
      pageBytes: this.#pageBytes,
    };
  }
}
