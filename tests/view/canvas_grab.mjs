// Page-side helpers the browser tests share, installed into a loaded page: the WebGL canvas's
// pixels copied through a 2D canvas (WebGL's own buffer may be cleared after compositing), and a
// wait of n drawn frames so a change in the scene has reached the canvas.
export async function installCanvasGrab(page) {
  await page.evaluate(() => {
    window.hsGrab = () => {
      const c = document.getElementById('scene');
      const o = document.createElement('canvas');
      o.width = c.width; o.height = c.height;
      const g = o.getContext('2d');
      g.drawImage(c, 0, 0);
      return g.getImageData(0, 0, o.width, o.height).data;
    };
    window.hsFrames = (n) => new Promise((r) => {
      const f = () => (n-- <= 0 ? r() : requestAnimationFrame(f));
      requestAnimationFrame(f);
    });
  });
}
