/**
 * Kysely table type of deploy templates (migration 0018). Timestamps are epoch ms, JSON as text
 * (docs/architecture.md); field names are the domain's (src/domain/inventory/deploy-templates.ts).
 */
import type { Generated } from 'kysely';

/** One deploy template, its steps as JSON. */
export interface DeployTemplatesTable {
  id: Generated<number>;
  version: Generated<number>;
  uuid: string;
  name: string;
  /** JSON array of `{interface, step, args, priority}`. */
  steps: string;
  /** JSON object. */
  extra: string;
  created_at: number;
  updated_at: number | null;
}

/** The deploy template tables, merged into the store's `Database` type. */
export interface DeployTemplateTables {
  deploy_templates: DeployTemplatesTable;
}
