import type { LabelPack } from '../label.types';
import {
  etherscanBlockedPack,
  etherscanMaliciousPack,
  etherscanSpamTokenPack,
  etherscanTornadoPack,
} from './etherscan.packs';
import { fortaMaliciousContractsPack, fortaMaliciousLabelsPack } from './forta.packs';
import { ofac0xb10cPack } from './ofac-0xb10c.pack';
import { ofacUltrasoundmoneyPack } from './ofac-ultrasoundmoney.pack';
import { scamsnifferPack } from './scamsniffer.pack';
import { uniswapTokenListPack } from './uniswap-token-list.pack';

/** Every pack the loader ingests. A new dataset = one small file exporting a LabelPack, listed here. */
export const LABEL_PACKS: readonly LabelPack[] = [
  ofacUltrasoundmoneyPack,
  ofac0xb10cPack,
  etherscanTornadoPack,
  etherscanMaliciousPack,
  etherscanBlockedPack,
  etherscanSpamTokenPack,
  fortaMaliciousLabelsPack,
  fortaMaliciousContractsPack,
  scamsnifferPack,
  uniswapTokenListPack,
];
