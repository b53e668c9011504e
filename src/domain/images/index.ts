/**
 * The image area (Glance v2 subset): image metadata, data upload/download and members, over
 * an image repository, an image data store and a project lookup.
 */
import type { Clock } from '../clock.ts';
import type { Policy } from '../policy/types.ts';
import { ImageAccess } from './access.ts';
import { ImageDataService } from './data.ts';
import type { ImagesLog } from './deps.ts';
import { ImageService } from './images.ts';
import { ImageMemberService } from './members.ts';
import { DEFAULT_IMAGE_LIMITS, type ImageLimits } from './model.ts';
import type { DigestFactory, ImageRepository, ImageStore, ProjectLookup } from './ports.ts';
import { inThreadDigests } from './digest.ts';
import { ImageJanitor } from './janitor.ts';

export * from './model.ts';
export * from './errors.ts';
export type * from './ports.ts';
export type { ImageChange } from './patch.ts';
export type { ImageListInput, ImagePage } from './list.ts';
export { DEFAULT_LIMIT, MAX_LIMIT } from './list.ts';
export type { DownloadResult } from './data.ts';
export type { ByteRange } from './range.ts';
export type { ImagesLog } from './deps.ts';
export { INVALID_IMAGE_DATA, inThreadDigests } from './digest.ts';
export { ImageService, ImageDataService, ImageMemberService, ImageJanitor };
export type { JanitorReport, JanitorLog } from './janitor.ts';

/** What the image area is built from. */
export interface ImagesDeps {
  readonly repo: ImageRepository;
  readonly store: ImageStore;
  readonly projects: ProjectLookup;
  readonly policy: Policy;
  readonly clock: Clock;
  readonly log: ImagesLog;
  /** Overrides of {@link DEFAULT_IMAGE_LIMITS}. */
  readonly limits?: Partial<ImageLimits>;
  /** Where upload digests are computed (default: in the calling thread). */
  readonly digests?: DigestFactory;
}

/** The image services. */
export interface Images {
  readonly images: ImageService;
  readonly data: ImageDataService;
  readonly members: ImageMemberService;
  /** Removes from the image store what no image record owns (run by a background worker). */
  readonly janitor: ImageJanitor;
}

/** Assemble the image services. */
export function createImages(deps: ImagesDeps): Images {
  const limits: ImageLimits = { ...DEFAULT_IMAGE_LIMITS, ...deps.limits };
  const d = {
    repo: deps.repo,
    store: deps.store,
    access: new ImageAccess(deps.policy, deps.repo),
    projects: deps.projects,
    clock: deps.clock,
    limits,
    log: deps.log,
    digests: deps.digests ?? inThreadDigests,
  };
  return {
    images: new ImageService(d),
    data: new ImageDataService(d),
    members: new ImageMemberService(d),
    janitor: new ImageJanitor(deps.repo, deps.store, deps.log, () => deps.clock.now()),
  };
}
