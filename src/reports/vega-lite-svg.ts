import type * as Vega from 'vega' with { 'resolution-mode': 'import' };
import type * as VegaLite from 'vega-lite' with { 'resolution-mode': 'import' };

/** A Vega-Lite specification (vega-lite's own top-level type). */
export type VegaLiteSpec = VegaLite.TopLevelSpec;

interface VegaLibraries {
  vega: typeof Vega;
  vegaLite: typeof VegaLite;
}

let libraries: Promise<VegaLibraries> | undefined;

/** vega and vega-lite ship ESM only; this CommonJS module loads them once, on first use. */
function loadVegaLibraries(): Promise<VegaLibraries> {
  libraries ??= Promise.all([import('vega'), import('vega-lite')]).then(([vega, vegaLite]) => ({ vega, vegaLite }));
  return libraries;
}

/**
 * Renders a Vega-Lite chart to an SVG string in Node, with no browser and no network: the spec is
 * compiled to Vega, run headless (`renderer: 'none'`) and serialised with `View.toSVG()`. The
 * data must be inline (`data.values`): the view's loader refuses every URL and file, so a chart
 * can never fetch anything. Text from the data is escaped by vega's SVG serialiser.
 */
export async function renderVegaLiteSvg(spec: VegaLiteSpec): Promise<string> {
  const { vega, vegaLite } = await loadVegaLibraries();
  const compiled = vegaLite.compile(spec, { logger: vega.logger(vega.Error) }).spec;
  const refusingLoader = vega.loader();
  refusingLoader.load = async (uri: string) => {
    throw new Error(`charts use inline data only; refused to load ${uri}`);
  };
  const view = new vega.View(vega.parse(compiled), { renderer: 'none', loader: refusingLoader, logLevel: vega.Error });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
