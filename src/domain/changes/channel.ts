/**
 * The live channel of one caller: the process's change feed, filtered by the visibility rules
 * (./visibility.ts), as `{kind, id, op, seq}` events — never a field value.
 */
import type { AuthContext } from '../auth.ts';
import type { ChangeFeed, ChangeKind, ChangeOp, ChangeSubscription } from './model.ts';
import { changeViewer, seesChange, type ChangeViewer } from './visibility.ts';

/** One change as the channel tells it. */
export interface ChangeEvent {
  readonly kind: ChangeKind;
  /** The resource's uuid. */
  readonly id: string;
  readonly op: ChangeOp;
  /** The change log's cursor (the SSE event id). */
  readonly seq: number;
}

/** What a caller's channel tells its reader. */
export interface ChannelListener {
  /** Live from `seq`; `reset`: changes were lost, read everything again (see `ChangeListener.start`). */
  start(seq: number, reset: boolean): void;
  /** A change the caller may see. */
  change(event: ChangeEvent): void;
}

/** An open channel. */
export interface Channel extends ChangeSubscription {
  /** Apply the caller's context as re-validated (its roles may have changed; the project has not). */
  update(ctx: AuthContext): void;
}

/** Opens live channels on one change feed. */
export class ChangeChannels {
  /**
   * @param feed the process's change feed
   * @param ancestors ancestor ids of a project, nearest first (the identity directory's)
   */
  constructor(
    private readonly feed: ChangeFeed,
    private readonly ancestors: (projectId: string) => Promise<string[]>,
  ) {}

  /** The viewer a caller is (reads its project's ancestors). */
  async viewerOf(ctx: AuthContext): Promise<ChangeViewer> {
    return changeViewer(ctx, ctx.projectId ? await this.ancestors(ctx.projectId) : []);
  }

  /**
   * Open the channel of a viewer ({@link viewerOf}). The listener is never called during this
   * call: the first call (`start`) comes from the feed's next read.
   * @param from the last seq the caller has seen, or null for "from now"
   * @returns the channel; events flow to `listener` until `close()`
   */
  subscribe(viewer: ChangeViewer, from: number | null, listener: ChannelListener): Channel {
    let current = viewer;
    const subscription = this.feed.subscribe(from, {
      start: (seq, reset) => listener.start(seq, reset),
      change: (record) => {
        if (seesChange(current, record)) listener.change({ kind: record.kind, id: record.resource_id, op: record.op, seq: record.seq });
      },
    });
    return {
      update: (ctx) => {
        current = changeViewer(ctx, viewer.ancestors);
      },
      close: () => subscription.close(),
    };
  }
}
