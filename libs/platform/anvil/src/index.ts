export { anvilBinaryPath } from './anvil-binary';
