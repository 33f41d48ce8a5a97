// Preloaded by bench/startup.bench.ts (node --import): the process writes its own CPU time and
// maxRSS to stderr as it exits, a JSON line, whatever made it exit.
if (process.env.WARMUP_USAGE_AT_EXIT === '1') {
  process.on('exit', () => {
    const cpu = process.cpuUsage();
    const usage = {
      cpuMs: Math.round((cpu.user + cpu.system) / 1000),
      maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    };
    process.stderr.write(`${JSON.stringify(usage)}\n`);
  });
}
