// Drawing by pixels: a frame's many small rectangles (stack chart boxes, activity graph columns) written into one
// ImageData and put on the canvas as one image. Software-composited Chromium rasterises each filled rectangle or path of
// a canvas at commit: a wide view's thousands of slivers cost a frame more than its drawing, the pixels well under one.

/**
 * A CSS colour as the 32-bit pixel an ImageData holds (RGBA bytes, unpremultiplied) at `alpha` times its own opacity,
 * found by painting it once on a 1×1 canvas; the palette's few colours are cached (a theme change brings new strings).
 */
const pixelOfColour = new Map<string, number>();
let colourProbe: CanvasRenderingContext2D | null = null;

export function colourPixel(colour: string, alpha: number): number {
  const key = `${alpha} ${colour}`;
  const known = pixelOfColour.get(key);
  if (known !== undefined) return known;
  colourProbe ??= document.createElement('canvas').getContext('2d', { willReadFrequently: true });
  let pixel = 0;
  if (colourProbe) {
    colourProbe.clearRect(0, 0, 1, 1);
    colourProbe.fillStyle = colour;
    colourProbe.fillRect(0, 0, 1, 1);
    const [r, g, b, a] = colourProbe.getImageData(0, 0, 1, 1).data;
    // The bytes in memory order, read back as the platform's 32-bit word.
    pixel = new Uint32Array(new Uint8ClampedArray([r, g, b, Math.round(a * alpha)]).buffer)[0];
  }
  pixelOfColour.set(key, pixel);
  return pixel;
}

/**
 * The pixels a frame writes and the canvas they are put on before being drawn, kept from frame to frame (grown only when
 * a frame needs more: resizing a canvas reallocates it), so a frame allocates nothing for them.
 */
export class PixelImage {
  private canvas: HTMLCanvasElement | null = null;
  private image: ImageData | null = null;
  private pixels = new Uint32Array(0);

  /** Cleared pixels for an image of `width` × `height` device pixels (rows of `width` words); null without a 2D context. */
  pixelsFor(width: number, height: number): Uint32Array | null {
    if (!this.canvas) this.canvas = document.createElement('canvas');
    if (!this.image || this.image.width !== width || this.image.height < height) {
      this.image = new ImageData(width, Math.max(height, this.image?.width === width ? this.image.height : 0));
      this.pixels = new Uint32Array(this.image.data.buffer);
      this.canvas.width = this.image.width;
      this.canvas.height = this.image.height;
    }
    if (!this.canvas.getContext('2d')) return null;
    this.pixels.fill(0, 0, width * height);
    return this.pixels;
  }

  /** Draws the top `height` rows of what pixelsFor gave on `ctx` at (0, y), over what it holds (as filled shapes would be). */
  drawOn(ctx: CanvasRenderingContext2D, y: number, height: number): void {
    if (!this.canvas || !this.image || height <= 0) return;
    const width = this.image.width;
    this.canvas.getContext('2d')?.putImageData(this.image, 0, 0, 0, 0, width, height);
    ctx.drawImage(this.canvas, 0, 0, width, height, 0, y, width, height);
  }
}

/** The one image the lanes' canvas is drawn with, a lane at a time (each is drawn on the canvas before the next is written). */
export const lanePixels = new PixelImage();
