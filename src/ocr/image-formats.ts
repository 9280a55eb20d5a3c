/** The image formats recognised, as sharp names them: each is an image file's `metadata.format` (no import, so the chunker may read it). */
export const IMAGE_FORMATS: ReadonlySet<string> = new Set(['png', 'jpeg', 'webp', 'tiff', 'gif', 'bmp'])
