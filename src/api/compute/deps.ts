/** What the compute API plugin (Nova v2.1 subset) receives. */
import type { Compute } from '../../domain/compute/index.ts';
import type { ApiCommonDeps } from '../common/deps.ts';

/** The compute API's dependencies. */
export interface ComputeApiDeps extends ApiCommonDeps {
  readonly compute: Compute;
}
