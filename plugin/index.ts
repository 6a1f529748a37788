// The schema entry of the multi-language package (see PulumiPlugin.yaml): ComponentProvider maps
// package.json's entry to a TypeScript source, finds none next to the compiled build, and reads this
// file instead, following the re-export to the component and its argument types.
export * from '../infra/index';
