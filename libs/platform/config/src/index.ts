export * from './load-config';
export * from './common-env';
export * from './upstreams';
export * from './clock';
export * from './secret-setting';
export * from './networks-setting';
export * from './transport-settings';
export * from './file-read-each-time';
