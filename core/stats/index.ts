export { signTest, bootstrapMeanCI, mulberry32, type SignTest, type BootstrapCI } from './paired.ts';
