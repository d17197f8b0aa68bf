import {
  credentials,
  makeGenericClientConstructor,
  Metadata,
  status,
  type Client,
  type ServiceError,
} from '@grpc/grpc-js';

/** A gRPC client that sends and receives raw bytes, so the fuzz suite can send any message. */
export interface RawGrpcClient {
  call(
    method: string,
    message: Buffer,
    /** Text values; a key ending in `-bin` sends its value's UTF-8 bytes. */
    metadata: Record<string, string>,
    deadlineMs?: number,
  ): Promise<{ code: number; details: string }>;
  close(): void;
}

export function rawGrpcClient(target: string, service: string, methods: string[]): RawGrpcClient {
  const definition = Object.fromEntries(
    methods.map((method) => [
      method,
      {
        path: `/${service}/${method}`,
        requestStream: false,
        responseStream: false,
        requestSerialize: (value: Buffer) => value,
        requestDeserialize: (value: Buffer) => value,
        responseSerialize: (value: Buffer) => value,
        responseDeserialize: (value: Buffer) => value,
      },
    ]),
  );
  const Constructor = makeGenericClientConstructor(definition, service);
  const client = new Constructor(target, credentials.createInsecure()) as Client &
    Record<string, (...args: unknown[]) => void>;
  return {
    call(method, message, entries, deadlineMs = 8_000) {
      const metadata = new Metadata();
      // A `-bin` key carries binary by the protocol (grpc-js refuses a string there): the same
      // text goes as its bytes, so the server still meets binary metadata of any content.
      for (const [key, value] of Object.entries(entries))
        metadata.set(key, key.endsWith('-bin') ? Buffer.from(value, 'utf8') : value);
      return new Promise((resolve) => {
        client[method]!(
          message,
          metadata,
          { deadline: Date.now() + deadlineMs },
          (error: ServiceError | null) =>
            resolve(
              error
                ? { code: error.code, details: error.details }
                : { code: status.OK, details: '' },
            ),
        );
      });
    },
    close: () => client.close(),
  };
}

/** Protobuf wire bytes of a length-delimited field (string, bytes, message). */
export function lengthDelimited(field: number, payload: Buffer): Buffer {
  const length: number[] = [];
  let n = payload.length;
  do {
    let byte = n & 0x7f;
    n = Math.floor(n / 128);
    if (n > 0) byte |= 0x80;
    length.push(byte);
  } while (n > 0);
  return Buffer.concat([Buffer.from([(field << 3) | 2, ...length]), payload]);
}

/** Statuses that mean the server failed rather than refused: crash, hang or dropped channel. */
export const SERVER_FAILURE_CODES: ReadonlySet<number> = new Set([
  status.UNKNOWN,
  status.INTERNAL,
  status.DEADLINE_EXCEEDED,
  status.UNAVAILABLE,
  status.DATA_LOSS,
]);
