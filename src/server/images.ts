/**
 * Composition of the image area for one process: the image services over the image
 * repository, the filesystem image store under `<data-dir>/images`, upload digests in worker
 * threads, and the identity directory as the project lookup (no policy checks: existence of
 * project ids only).
 */
import path from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.ts';
import type { IdentityDirectory } from '../domain/identity/index.ts';
import { createImages, type Images, type ProjectLookup } from '../domain/images/index.ts';
import type { Policy } from '../domain/policy/types.ts';
import { FilesystemImageStore } from '../drivers/image-store/filesystem.ts';
import { WorkerDigests } from '../drivers/image-store/worker-digest.ts';
import type { Store } from '../store/database.ts';
import { KyselyImageRepository } from '../store/images/repository.ts';
import type { Config } from './config.ts';

/** The image area's view of the identity directory. */
export function projectLookupOf(directory: IdentityDirectory): ProjectLookup {
  return {
    async existing(ids) {
      const found = await directory.projectsByIds(ids);
      return new Set(found.keys());
    },
  };
}

/** What {@link createImageServices} needs from the rest of the process. */
export interface ImageWiring {
  readonly config: Config;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly store: Store;
  readonly policy: Policy;
  readonly directory: IdentityDirectory;
}

/**
 * Build the image services of one process.
 * @throws Error when the image directory cannot be created
 */
export async function createImageServices(w: ImageWiring): Promise<Images> {
  const imageStore = await FilesystemImageStore.open(path.join(w.config.dataDir, 'images'));
  return createImages({
    repo: new KyselyImageRepository(w.store),
    store: imageStore,
    projects: projectLookupOf(w.directory),
    policy: w.policy,
    clock: w.clock,
    log: w.logger.child({ component: 'images' }),
    limits: { maxImageBytes: w.config.images.maxImageBytes },
    digests: new WorkerDigests(),
  });
}
