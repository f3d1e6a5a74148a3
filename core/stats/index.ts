export { signTest, bootstrapMeanCI, type SignTest, type BootstrapCI } from './paired.ts';
export { PassAtKError, meanPassAtK, passAtK } from './passAtK.ts';
