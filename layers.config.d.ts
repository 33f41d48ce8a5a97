// The types of layers.config.js, which eslint.config.js loads before any TypeScript loader.
export interface Place {
  place: string;
  floor: number;
  kind: 'file' | 'pattern' | 'folder';
  folder: string;
  pattern: RegExp | null;
}
export interface UpwardImport {
  from: string;
  to: string;
  reason: string;
}
export declare const FLOORS: readonly (readonly string[])[];
export declare const UPWARD_IMPORTS: readonly UpwardImport[];
export declare function placeOf(path: string): Place | undefined;
