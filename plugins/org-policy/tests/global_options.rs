//! Prefix rules read past each program's global options, in every spelling: a deny rule for
//! `kubectl delete` denies `kubectl -n prod delete`, `kubectl --namespace=prod delete`, ...; an
//! allow rule reads past the options that only change the output or the configured target,
//! never past one that loads other configuration or code, nor one no table lists.

use acp_gate_plugin::Request;
use org_policy::policy::decision_of;
use org_policy::testing::request;
use org_policy::{Config, evaluate};
use serde_json::json;

/// One CLI: a prefix, and commands by which rules match them.
struct Cli {
    prefix: serde_json::Value,
    /// A deny rule and an allow rule with the prefix both match these (known, inert options).
    both: &'static [&'static str],
    /// Only the deny rule matches these (options that load configuration or code, options no
    /// table lists, words only known at run time).
    deny_only: &'static [&'static str],
    /// Neither matches these (another sub-command, an option's value that looks like one).
    neither: &'static [&'static str],
}

fn rule(decision: &str, prefix: &serde_json::Value) -> Config {
    serde_json::from_value(json!({ "rules": [
        { "name": "r", "decision": decision, "reason": "because", "prefix": prefix }
    ]}))
    .unwrap()
}

fn decide(config: &Config, req: &Request) -> &'static str {
    let verdict = evaluate(req, config).unwrap();
    decision_of(&verdict).map_or("abstain", |d| d.as_str())
}

/// Every CLI's commands against a deny rule and an allow rule with its prefix.
#[track_caller]
fn check(clis: &[Cli]) {
    let mut wrong = Vec::new();
    for cli in clis {
        let (deny, allow) = (rule("deny", &cli.prefix), rule("allow", &cli.prefix));
        let groups = [
            (cli.both, "deny", "allow"),
            (cli.deny_only, "deny", "abstain"),
            (cli.neither, "abstain", "abstain"),
        ];
        for (commands, by_deny, by_allow) in groups {
            for command in commands {
                let req = request(command);
                for (config, want) in [(&deny, by_deny), (&allow, by_allow)] {
                    let got = decide(config, &req);
                    if got != want {
                        wrong.push(format!(
                            "{} {command:?}: expected {want}, got {got}",
                            cli.prefix
                        ));
                    }
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn kubernetes_and_container_clis() {
    check(&[
        Cli {
            prefix: json!(["kubectl", "delete"]),
            both: &[
                "kubectl delete pod x -- --server=https://x.example",
                "kubectl delete pod x",
                "kubectl -n prod delete pod x",
                "kubectl -nprod delete pod x",
                "kubectl --namespace prod delete pod x",
                "kubectl --namespace=prod delete pod x",
                "kubectl --context x delete pod",
                "kubectl --context=x -n y delete pod",
                "kubectl -v 6 --request-timeout=5s delete pod",
                "/usr/local/bin/kubectl -n prod delete pod x",
            ],
            deny_only: &[
                "kubectl --server https://x.example delete pod x",
                "kubectl delete pod x --kubeconfig ./k",
                "kubectl delete pod \"$POD\"",
                "kubectl -s https://x.example delete pod x",
                "kubectl delete pod x --server=https://x.example",
                "kubectl --tls-server-name x delete pod x",
                "kubectl --insecure-skip-tls-verify delete pod x",
                "kubectl --insecure-skip-tls-verify=true delete pod x",
                "kubectl --kubeconfig ./k delete pod x",
                "kubectl --kubeconfig=./k -n prod delete pod",
                "kubectl --bogus delete pod",
                "kubectl --bogus x delete pod",
                "kubectl --names=prod delete pod",
                "kubectl $FLAGS delete pod",
                "kubectl -n \"$NS\" delete pod",
            ],
            neither: &[
                "kubectl get pods",
                "kubectl -n delete get pods",
                "kubectl get pod delete",
                "echo kubectl delete",
            ],
        },
        Cli {
            prefix: json!(["kubectl", "delete", "namespace"]),
            both: &[
                "kubectl delete -n x namespace prod",
                "kubectl -n x delete --context=c namespace prod",
            ],
            deny_only: &["kubectl delete --wait=false namespace prod"],
            neither: &[
                "kubectl delete pod namespace",
                "kubectl delete -f namespace.yaml",
            ],
        },
        Cli {
            prefix: json!(["helm", "uninstall"]),
            both: &[
                "helm -n prod uninstall r",
                "helm --namespace=prod --kube-context c uninstall r",
                "helm --debug uninstall r",
            ],
            deny_only: &[
                "helm --kube-apiserver https://x.example uninstall r",
                "helm uninstall r --kube-insecure-skip-tls-verify",
                "helm --kubeconfig k uninstall r",
                "helm --bogus uninstall r",
            ],
            neither: &["helm list", "helm -n uninstall list"],
        },
        Cli {
            prefix: json!(["docker", "run"]),
            both: &[
                "docker --context y run alpine",
                "docker -c y run alpine",
                "docker -D -l debug run alpine",
            ],
            deny_only: &[
                "docker -H tcp://h:2375 run alpine",
                "docker -Htcp://h run alpine",
                "docker --host=tcp://h run alpine",
                "docker -H x --context y run alpine",
                "docker --config /tmp/d run alpine",
                "docker --tlscert=c.pem run alpine",
                "docker --bogus run alpine",
            ],
            neither: &["docker ps", "docker -H run ps"],
        },
        Cli {
            prefix: json!(["podman", "run"]),
            both: &[
                "podman --log-level debug run x",
                "podman -c conn run x",
                "podman --remote run x",
            ],
            deny_only: &[
                "podman --root /x run x",
                "podman --bogus run x",
                "podman --url tcp://x.example:8080 run alpine",
                "podman run --url=tcp://x.example alpine",
            ],
            neither: &["podman ps"],
        },
    ]);
}

#[test]
fn infrastructure_and_cloud_clis() {
    check(&[
        Cli {
            prefix: json!(["terraform", "apply"]),
            both: &["terraform apply", "terraform -version apply"],
            deny_only: &[
                "terraform -chdir=infra apply",
                "terraform -chdir infra apply",
                "terraform --chdir=infra apply -auto-approve",
                "terraform -bogus apply",
            ],
            neither: &["terraform plan", "terraform -chdir=apply plan"],
        },
        Cli {
            prefix: json!(["pulumi", "destroy"]),
            both: &["pulumi --non-interactive destroy", "pulumi -v 3 destroy"],
            deny_only: &[
                "pulumi -C infra destroy",
                "pulumi --cwd=infra destroy",
                "pulumi --bogus destroy",
            ],
            neither: &["pulumi preview"],
        },
        Cli {
            prefix: json!(["aws", "s3", "rm"]),
            both: &[
                "aws --profile p --region r s3 rm s3://b/k",
                "aws s3 --profile p rm s3://b/k",
                "aws --output=json s3 rm s3://b/k",
            ],
            deny_only: &[
                "aws s3 rm s3://b/k --no-verify-ssl",
                "aws --endpoint-url http://localhost:4566 s3 rm s3://b/k",
                "aws --ca-bundle c.pem s3 rm s3://b/k",
                "aws --bogus s3 rm s3://b/k",
            ],
            neither: &["aws s3 ls", "aws --profile rm s3 ls"],
        },
        Cli {
            prefix: json!(["gcloud", "compute", "instances", "delete"]),
            both: &[
                "gcloud --project p compute instances delete vm",
                "gcloud compute --project=p instances delete vm",
                "gcloud -q compute instances --verbosity debug delete vm",
            ],
            deny_only: &[
                "gcloud --flags-file f.yaml compute instances delete vm",
                "gcloud --bogus compute instances delete vm",
            ],
            neither: &["gcloud compute instances list"],
        },
        Cli {
            prefix: json!(["az", "group", "delete"]),
            both: &[
                "az --subscription s group delete -n g",
                "az group -o json delete -n g",
                "az --debug --only-show-errors group delete",
            ],
            deny_only: &["az --bogus group delete"],
            neither: &["az group list"],
        },
        Cli {
            prefix: json!(["gh", "pr", "merge"]),
            both: &[
                "gh -R owner/repo pr merge 1",
                "gh --repo=owner/repo pr merge",
                "gh -Rowner/repo pr merge",
                "gh pr -R o/r merge 1",
            ],
            deny_only: &["gh --bogus pr merge"],
            neither: &["gh pr view", "gh -R merge pr view"],
        },
    ]);
}

#[test]
fn language_tools_and_git() {
    check(&[
        Cli {
            prefix: json!(["git", "push"]),
            both: &["git --no-pager push", "git -P --literal-pathspecs push"],
            deny_only: &[
                "git -C . push",
                "git -c core.sshCommand=x push",
                "git --git-dir=.git push",
                "git --work-tree . push",
                "git --bogus push",
            ],
            neither: &["git log", "git -C push log", "git log push"],
        },
        Cli {
            prefix: json!(["npm", "install"]),
            both: &[
                "npm -g install x",
                "npm --loglevel silly install",
                "npm --workspace=a install",
                "npm -w a install",
            ],
            deny_only: &[
                "npm --prefix x install",
                "npm -C x install",
                "npm --registry=https://r.example install",
                "npm --bogus install",
            ],
            neither: &["npm test", "npm run install"],
        },
        Cli {
            prefix: json!(["pnpm", "add"]),
            both: &[
                "pnpm -r add x",
                "pnpm --filter web add x",
                "pnpm -F web add x",
            ],
            deny_only: &["pnpm -C pkg add x", "pnpm --dir=pkg add x"],
            neither: &["pnpm test"],
        },
        Cli {
            prefix: json!(["yarn", "add"]),
            both: &["yarn --silent add x", "yarn --network-timeout 1000 add x"],
            deny_only: &["yarn --cwd pkg add x", "yarn --bogus add x"],
            neither: &["yarn test"],
        },
        Cli {
            prefix: json!(["cargo", "build"]),
            both: &[
                "cargo +nightly --locked build",
                "cargo --color always build",
                "cargo -qv build",
                "cargo --frozen --offline build --release",
            ],
            deny_only: &[
                "cargo -Z unstable-options build",
                "cargo -Zbuild-std build",
                "cargo --config k=v build",
                "cargo +/opt/tc build",
                "cargo --bogus build",
            ],
            neither: &["cargo test", "cargo --explain build test"],
        },
        Cli {
            // go has no options before its command: `go build -C dir`.
            prefix: json!(["go", "build"]),
            both: &["go build -C dir ./..."],
            deny_only: &["go -C dir build"],
            neither: &["go test"],
        },
        Cli {
            prefix: json!(["pip", "install"]),
            both: &[
                "pip -q install x",
                "pip --disable-pip-version-check install x",
                "pip --timeout 30 install x",
            ],
            deny_only: &[
                "pip install --proxy http://x.example:3128 requests",
                "pip --trusted-host x.example install requests",
                "pip --python /usr/bin/python3 install x",
                "pip --bogus install x",
            ],
            neither: &["pip list"],
        },
        Cli {
            prefix: json!(["uv", "pip", "install"]),
            both: &["uv -q pip install x", "uv pip --offline install x"],
            deny_only: &["uv --directory d pip install x"],
            neither: &["uv pip list"],
        },
        Cli {
            prefix: json!(["make", "deploy"]),
            both: &[
                "make -j4 deploy",
                "make -s --jobs=4 deploy",
                "make -k deploy",
            ],
            deny_only: &[
                "make -j 4 deploy",
                "make -C infra deploy",
                "make -f Makefile.prod deploy",
                "make ENV=prod deploy",
                "make --bogus deploy",
            ],
            neither: &["make test", "make -C deploy test"],
        },
    ]);
}

#[test]
fn prefixes_through_paths_wrappers_and_shells() {
    let deny = rule("deny", &json!(["kubectl", "delete"]));
    let allow = rule("allow", &json!(["kubectl", "delete"]));
    let cases = [
        ("/usr/local/bin/kubectl -n prod delete pod x", "allow"),
        ("bash -c 'kubectl --namespace=prod delete pod x'", "allow"),
        ("sudo kubectl -n prod delete pod x", "abstain"),
        ("env KUBECONFIG=k kubectl -n prod delete pod x", "abstain"),
        ("timeout 5 kubectl --context c delete pod x", "abstain"),
        ("echo ok && kubectl -n prod delete pod x", "abstain"),
        ("x=$(kubectl -n p delete pod y)", "allow"),
    ];
    for (command, by_allow) in cases {
        assert_eq!(decide(&deny, &request(command)), "deny", "{command}");
        assert_eq!(decide(&allow, &request(command)), by_allow, "{command}");
    }
}

#[test]
fn options_written_in_a_prefix_match_in_either_spelling() {
    let prefix = json!(["kubectl", "--context", "prod", "delete"]);
    for decision in ["deny", "allow"] {
        let config = rule(decision, &prefix);
        for command in [
            "kubectl --context prod delete pod",
            "kubectl --context=prod delete pod",
            "kubectl -n x --context prod delete pod",
        ] {
            assert_eq!(decide(&config, &request(command)), decision, "{command}");
        }
        let glued = rule(decision, &json!(["kubectl", "--context=prod", "delete"]));
        assert_eq!(
            decide(&glued, &request("kubectl --context prod delete pod")),
            decision
        );
        assert_eq!(
            decide(&config, &request("kubectl --context dev delete pod")),
            "abstain"
        );
    }
}
