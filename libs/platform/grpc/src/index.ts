export * from './grpc-status';
export * from './grpc-service-definition';
export * from './grpc-server';
export * from './grpc-server-metrics';
export * from './grpc-client';
export * from './grpc-tls';
export * from './tls-files-provider';
export * from './app-grpc-tls';
