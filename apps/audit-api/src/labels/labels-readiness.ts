import { Injectable, type OnModuleInit } from '@nestjs/common';
import { ReadinessRegistry } from '@meridian/platform-observability';
import { LabelsRepository } from './labels.repository';
import { LABEL_PACKS } from './packs';

/**
 * Readiness `labels`: every shipped label pack has rows in `audit.labels`. Without them a
 * sanctioned or mixer address answers clean with no error (a deployment that never ran
 * `load-labels.ts`), so audit-api takes no traffic until they are loaded. A pack loads in one
 * transaction, so a pack is either all there or missing: a partial load names the rest.
 */
@Injectable()
export class LabelsReadiness implements OnModuleInit {
  constructor(
    private readonly labels: LabelsRepository,
    private readonly readiness: ReadinessRegistry,
  ) {}

  onModuleInit(): void {
    this.readiness.register('labels', () => this.check());
  }

  async check(): Promise<void> {
    const missing = await this.labels.packsWithoutRows(LABEL_PACKS.map((pack) => pack.name));
    if (missing.length > 0)
      throw new Error(
        `label packs not loaded: ${missing.join(', ')} ` +
          '(run apps/audit-api/src/labels/load-labels.ts against this database)',
      );
  }
}
