/** What the lease API plugin (esi-leap v1) receives. */
import type { NodeConsoleService } from '../../domain/inventory/node-console.ts';
import type { Leasing } from '../../domain/leasing/index.ts';
import type { ApiCommonDeps } from '../common/deps.ts';

/** The lease API's dependencies: leasing, and the consoles its console websocket opens. */
export interface LeaseApiDeps extends ApiCommonDeps {
  readonly leasing: Leasing;
  readonly consoles: NodeConsoleService;
}
