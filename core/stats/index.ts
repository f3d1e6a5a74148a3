export { signTest, bootstrapMeanCI, type SignTest, type BootstrapCI } from './paired.ts';
