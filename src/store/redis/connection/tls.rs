//! TLS for Redis connections: rustls with the system's roots (honouring
//! `SSL_CERT_FILE`), an optional private CA and a client certificate, and the crypto
//! provider redis-rs 1.x needs installed before the first connection.

use std::path::Path;
use std::sync::Once;

use base64::Engine as _;
use redis::{ClientTlsConfig, TlsCertificates};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::store::redis::RedisOptions;

use super::*;

// ---------------------------------------------------------------------------------
// TLS

/// Installs ring as rustls's process-wide crypto provider, once. redis-rs 1.x builds
/// its rustls configuration with the process default and brings no provider of its
/// own; if the application installed one first (aws-lc-rs, say), that one stays.
pub fn install_crypto_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if rustls::crypto::ring::default_provider()
            .install_default()
            .is_err()
        {
            tracing::debug!("a rustls crypto provider was already installed; keeping it");
        }
    });
}

/// Appends `cert` to `pem` as a PEM block.
pub(crate) fn push_pem(pem: &mut String, cert: &CertificateDer<'_>) {
    let b64 = base64::engine::general_purpose::STANDARD.encode(cert.as_ref());
    pem.push_str("-----BEGIN CERTIFICATE-----\n");
    for line in b64.as_bytes().chunks(64) {
        pem.push_str(&String::from_utf8_lossy(line));
        pem.push('\n');
    }
    pem.push_str("-----END CERTIFICATE-----\n");
}

pub(crate) fn tls_file_error(
    what: &'static str,
    path: &Path,
    why: impl Into<String>,
) -> ConnectError {
    ConnectError::TlsFile {
        what,
        path: path.to_owned(),
        why: why.into(),
    }
}

pub(crate) fn read_file(what: &'static str, path: &Path) -> Result<Vec<u8>, ConnectError> {
    std::fs::read(path).map_err(|e| {
        tls_file_error(
            what,
            path,
            format!("{e}; check the path in RedisOptions and that this process may read it"),
        )
    })
}

/// The certificates of a PEM file, each checked to be usable as `what`.
pub(crate) fn pem_certificates(
    what: &'static str,
    path: &Path,
    bytes: &[u8],
) -> Result<Vec<CertificateDer<'static>>, ConnectError> {
    let certs = CertificateDer::pem_slice_iter(bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| tls_file_error(what, path, format!("not valid PEM ({e})")))?;
    if certs.is_empty() {
        return Err(tls_file_error(
            what,
            path,
            "it holds no -----BEGIN CERTIFICATE----- block; give a PEM file",
        ));
    }
    Ok(certs)
}

/// The trusted roots (the system's plus `options.ca_file`) and the client identity,
/// in the form redis-rs takes them.
///
/// redis-rs trusts *only* the roots it is given once any are given, so the system's
/// roots are loaded here and passed along with the CA file; loading them here also
/// lets a store with a few unreadable certificates still work, where redis-rs would
/// refuse to connect at all.
pub(crate) fn tls_certificates(options: &RedisOptions) -> Result<TlsCertificates, ConnectError> {
    let mut pem = String::new();
    let native = rustls_native_certs::load_native_certs();
    let mut system = 0usize;
    for cert in &native.certs {
        // Keep only what rustls accepts as a trust anchor: redis-rs refuses the whole
        // set if one certificate in it does not parse.
        if rustls::RootCertStore::empty().add(cert.clone()).is_ok() {
            push_pem(&mut pem, cert);
            system += 1;
        }
    }
    if !native.errors.is_empty() {
        tracing::warn!(
            loaded = system,
            errors = ?native.errors.iter().map(ToString::to_string).collect::<Vec<_>>(),
            "some system root certificates could not be loaded"
        );
    }
    if let Some(path) = &options.ca_file {
        let bytes = read_file("CA file", path)?;
        for cert in pem_certificates("CA file", path, &bytes)? {
            if let Err(e) = rustls::RootCertStore::empty().add(cert.clone()) {
                return Err(tls_file_error(
                    "CA file",
                    path,
                    format!("a certificate in it is not usable as a CA ({e})"),
                ));
            }
            push_pem(&mut pem, &cert);
        }
    } else if system == 0 {
        let why = if native.errors.is_empty() {
            "no certificates found".to_owned()
        } else {
            native
                .errors
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        };
        return Err(ConnectError::NoRoots { why });
    }
    let client_tls = match (&options.client_cert, &options.client_key) {
        (None, None) => None,
        (Some(cert_path), Some(key_path)) => {
            let cert = read_file("client certificate", cert_path)?;
            pem_certificates("client certificate", cert_path, &cert)?;
            let key = read_file("client key", key_path)?;
            if let Err(e) = PrivateKeyDer::from_pem_slice(&key) {
                return Err(tls_file_error(
                    "client key",
                    key_path,
                    format!("no usable PEM private key in it ({e}); give the key's PEM file"),
                ));
            }
            Some(ClientTlsConfig {
                client_cert: cert,
                client_key: key,
            })
        }
        _ => {
            return Err(ConnectError::Options(
                "RedisOptions has a client certificate without its key or a key without its \
                 certificate; set both with RedisOptions::with_client_cert(cert, key)"
                    .into(),
            ));
        }
    };
    Ok(TlsCertificates {
        client_tls,
        root_cert: Some(pem.into_bytes()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    pub(crate) fn pem_encoding_round_trips() {
        let der = CertificateDer::from((0u8..200).collect::<Vec<u8>>());
        let mut pem = String::new();
        push_pem(&mut pem, &der);
        push_pem(&mut pem, &der);
        let back: Vec<_> = CertificateDer::pem_slice_iter(pem.as_bytes())
            .collect::<Result<_, _>>()
            .expect("parse");
        assert_eq!(back, vec![der.clone(), der]);
        assert!(pem.lines().all(|l| l.len() <= 64 || l.starts_with("-----")));
    }
}
