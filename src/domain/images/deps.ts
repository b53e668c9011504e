/** What the image services (metadata, lists, data) are built from. */
import type { Clock } from '../clock.ts';
import type { ImageAccess } from './access.ts';
import type { ImageLimits } from './model.ts';
import type { DigestFactory, ImageRepository, ImageStore, ProjectLookup } from './ports.ts';

/** Log lines of the image area (pino-compatible). */
export interface ImagesLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** What the image services are built from. */
export interface ImageDeps {
  readonly repo: ImageRepository;
  readonly store: ImageStore;
  readonly access: ImageAccess;
  readonly projects: ProjectLookup;
  readonly clock: Clock;
  readonly limits: ImageLimits;
  readonly log: ImagesLog;
  /** Where upload digests are computed. */
  readonly digests: DigestFactory;
}
