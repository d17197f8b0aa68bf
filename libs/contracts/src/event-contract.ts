import type { z } from 'zod';
import { compileSchemaCheck, type CompiledCheck } from './schema-check';
import type { StreamName } from './streams';

/**
 * One event type: where it goes and what it carries. The publisher derives the subject and the
 * `Nats-Msg-Id` from the payload, so a message can't be sent to a subject that doesn't match
 * its body, and consumers validate with the same schema.
 */
export interface EventContract<S extends z.ZodType = z.ZodType> {
  /** `<context>.<entity>.<event>.v<major>` */
  readonly type: string;
  readonly stream: StreamName;
  readonly schema: S;
  /** Unprefixed wildcard subject of every message of this type. */
  readonly subjectFilter: string;
  /** Unprefixed subject of one message. */
  subjectOf(payload: z.output<S>): string;
  /** Idempotency id (`Nats-Msg-Id`) of one message. */
  messageIdOf(payload: z.output<S>): string;
  /**
   * Events with large bodies on a hot consumer (usage flush parts): a check compiled from
   * `schema` that answers true only for a value the schema accepts unchanged, so a consumer may
   * take the value as parsed without zod copying it; false means "ask the schema" (which stays
   * the rule and gives the reason of a rejection). See `compileSchemaCheck`.
   */
  readonly accepts?: CompiledCheck;
}

export type PayloadOf<C extends EventContract> = z.output<C['schema']>;

export function defineEvent<S extends z.ZodType<{ id: string }>>(definition: {
  type: string;
  stream: StreamName;
  schema: S;
  family: { of(token: string): string; all: string };
  tokenOf(payload: z.output<S>): string;
  /** Compile `accepts` from the schema (large bodies on a hot consumer only). */
  compiledCheck?: boolean;
}): EventContract<S> {
  const accepts = definition.compiledCheck ? compileSchemaCheck(definition.schema) : undefined;
  if (definition.compiledCheck && accepts === undefined)
    throw new Error(`${definition.type}: its schema uses what compileSchemaCheck does not compile`);
  return {
    type: definition.type,
    stream: definition.stream,
    schema: definition.schema,
    subjectFilter: definition.family.all,
    subjectOf: (payload) => definition.family.of(definition.tokenOf(payload)),
    messageIdOf: (payload) => payload.id,
    ...(accepts ? { accepts } : {}),
  };
}
