/** What the image API plugin (Glance v2) receives. */
import type { ImageTempUrls } from '../../domain/deploy/temp-url.ts';
import type { Images } from '../../domain/images/index.ts';
import type { ApiCommonDeps } from '../common/deps.ts';

/** The image API's dependencies: the image services, and the temp URLs the deploy agent uses. */
export interface ImageApiDeps extends ApiCommonDeps {
  readonly images: Images;
  readonly imageTempUrls: ImageTempUrls;
}
