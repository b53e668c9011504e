/** What the network API plugin (Neutron v2.0 subset and esi's additions) receives. */
import type { Networking } from '../../domain/networking/index.ts';
import type { ApiCommonDeps } from '../common/deps.ts';

/** The network API's dependencies. */
export interface NetworkApiDeps extends ApiCommonDeps {
  readonly networking: Networking;
}
