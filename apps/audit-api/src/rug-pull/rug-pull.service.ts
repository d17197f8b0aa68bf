import { Injectable } from '@nestjs/common';
import { DomainError } from '@meridian/errors';

@Injectable()
export class RugPullService {
  async check(_authorization: string | undefined, _body: unknown): Promise<unknown> {
    throw new DomainError('not_implemented', 'internal');
  }
}
