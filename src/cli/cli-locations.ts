import { loadS3ClientSettings } from '../config';
import { isS3Location } from '../core/s3-url';
import { openOutputLocation, type OpenLocation, type OutputLocation } from '../storage/output-location';

const opened = new Map<string, OutputLocation>();

/**
 * Opens a location named on the command line (`--output`, an evaluation's inputs and outputs): a
 * directory, or `s3://…` with the S3 settings the workers use (AWS_ENDPOINT_URL, AWS_REGION; read
 * only when an s3:// location is given). Each location is opened once per process.
 * @throws ConfigurationError for unusable S3 settings, OutputLocationError for a malformed URL.
 */
export const openCliLocation: OpenLocation = (location) => {
  let opening = opened.get(location);
  if (!opening) {
    opening = isS3Location(location)
      ? openOutputLocation(location, loadS3ClientSettings(process.env))
      : openOutputLocation(location);
    opened.set(location, opening);
  }
  return opening;
};
