/**
 * A jest reporter that lists, after the run, every skipped test with its name, which carries why
 * (`testWhen` in test/integration/support/test-when.ts puts the missing prerequisite there): jest's
 * own summary only counts skipped tests when it runs more than one file. Configured in the `jest`
 * key of package.json beside the default reporter.
 */
class SkippedTestsReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.testResults.flatMap((file) =>
      file.testResults
        .filter((test) => test.status === 'pending')
        .map(
          (test) =>
            `  ${[...test.ancestorTitles, test.title].join(' › ')}  (${file.testFilePath.replace(`${process.cwd()}/`, '')})`,
        ),
    );
    if (skipped.length > 0) process.stderr.write(`\nSkipped, with why (${skipped.length}):\n${skipped.join('\n')}\n`);
  }
}

module.exports = SkippedTestsReporter;
