import { Injectable } from '@nestjs/common';

/** Tells the publishers (balance state, outbox) that committed changes wait to go out. */
@Injectable()
export class ChangeSignal {
  private readonly listeners: Array<() => void> = [];

  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  changed(): void {
    for (const listener of this.listeners) listener();
  }
}
